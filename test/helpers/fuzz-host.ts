// The host the wire fuzzers attack: in-process, with its HTTP server, in a sandbox where a fuzz
// case cannot do harm (PATH and SHELL name only `cat` and `true`, so text typed into a session is
// echoed, not run, and a made-up `session/create` finds no real program). It holds a target
// session for the fuzz cases and a bystander session that must keep answering on its own connection.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Host } from '../../src/host/host';
import type { SessionInfo } from '../../src/core/methods/types';
import { startHttpServer, type HttpServer } from '../../src/transport/http/http-server';
import type { RpcClient } from '../../src/transport/client/rpc-client';
import { connect, startHost, until, withTimeout } from './host';
import { LineClient } from './protocol';

/** Longest a bystander's `pty/status` may take after a fuzz batch (a generous bound: the machine is shared). */
const BYSTANDER_ANSWER_MS = 10_000;

/** What each placeholder of a generated value stands for at send time. */
export interface Placeholders {
  /** The target session's id. */
  '@target': string;
  /** Its name. */
  '@target-name': string;
  /** A unique prefix of its id. */
  '@target-prefix': string;
}

export class FuzzHost {
  /** The target of the fuzz cases (a `cat`); recreated when a case ends it. */
  target!: SessionInfo;
  bystander!: SessionInfo;
  private _control!: RpcClient;

  private constructor(
    readonly host: Host,
    readonly http: HttpServer,
    private readonly _close: () => Promise<void>,
    /** The sandbox directory (the sessions' cwd and the fake PATH). */
    readonly sandbox: string,
  ) {}

  /** What the target runs (a `cat`; in raw mode, `RAW_CAT`, no key ends it). */
  private _targetCommand: { command: string; args: string[] } = { command: 'cat', args: [] };

  static async start(options: { target?: { command: string; args: string[] }; sessionTcp?: boolean } = {}): Promise<FuzzHost> {
    const sandbox = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-fuzz-'));
    const bin = path.join(sandbox, 'bin');
    fs.mkdirSync(bin);
    for (const tool of ['cat', 'true']) fs.symlinkSync(whichOrFail(tool), path.join(bin, tool));
    // Sessions inherit this process's environment: only harmless programs can be found.
    process.env.PATH = bin;
    process.env.SHELL = path.join(bin, 'cat');
    const { host, close } = await startHost({ defaultCwd: sandbox, sessionTcp: options.sessionTcp });
    const http = await startHttpServer(host, { hostId: host.hostId });
    host.attachHttp(http);
    const fh = new FuzzHost(host, http, close, sandbox);
    if (options.target) fh._targetCommand = options.target;
    fh._control = await connect(host.controlAddress);
    fh.bystander = await fh._control.request<SessionInfo>('session/create', { command: 'cat', name: 'bystander', cols: 80, rows: 24 });
    await fh.restore();
    return fh;
  }

  get placeholders(): Placeholders {
    return { '@target': this.target.id, '@target-name': this.target.name, '@target-prefix': this.target.id.slice(0, this.target.id.length - 1) };
  }

  /** True when a selector would name the bystander (a fuzz case must not kill the witness). */
  namesBystander(selector: unknown): boolean {
    if (typeof selector !== 'string' || selector === '') return false;
    try {
      return this.host.registry.resolve(selector).id === this.bystander.id;
    } catch {
      return false;
    }
  }

  /**
   * After a batch: the bystander answers `pty/status` on a connection of its own, the target is
   * running again, and sessions the batch opened are gone.
   */
  async afterBatch(options: { fresh?: boolean } = {}): Promise<void> {
    await this.assertBystanderServed();
    await this.restore(options);
  }

  async assertBystanderServed(): Promise<void> {
    const c = await withTimeout(LineClient.connect({ path: this.bystander.address.slice('unix:'.length) }), BYSTANDER_ANSWER_MS, 'connecting to the bystander');
    try {
      const st = await c.result('pty/status', {}, BYSTANDER_ANSWER_MS);
      assert.equal(st.running, true, 'the bystander still runs');
    } finally {
      c.close();
    }
  }

  /**
   * Kills what the batch opened and makes sure a running target exists, at its usual size.
   * `fresh` replaces the target even when it seems well: a case that can signal it must ask for
   * that, because a SIGKILL sent by `pty/signal` is answered before the process's exit is reaped,
   * so the target still reads as running and would die under the next case.
   */
  async restore(options: { fresh?: boolean } = {}): Promise<void> {
    for (const s of this.host.registry.list()) {
      if (s.id !== this.bystander.id && s.id !== this.target?.id) this.host.registry.remove(s.id);
    }
    const t = this.target && this.host.registry.get(this.target.id);
    // A case may have ended it, or given it a lease (session/keep) that ends it once nobody is connected.
    if (options.fresh || !t || !t.running || t.leaseSeconds !== undefined) {
      if (t) this.host.registry.remove(t.id);
      this.target = await this._control.request<SessionInfo>('session/create', {
        ...this._targetCommand,
        name: `target-${Date.now()}-${++targetsMade}`,
        cols: 80,
        rows: 24,
      });
      if (this._targetCommand === RAW_CAT) await this.untilRaw(this.target.id);
    }
    await until(() => this.host.registry.list().length === 2, 5000, 'the sessions of the batch to go');
  }

  /** Until a raw target's terminal is raw (it says so once `stty` is done). */
  private async untilRaw(id: string): Promise<void> {
    await until(
      async () => (await this._control.request<{ screen: string }>('pty/read', { session: id })).screen.includes(RAW_READY),
      10_000,
      'the target to be raw',
    );
  }

  async close(): Promise<void> {
    this._control.close();
    await this._close();
    fs.rmSync(this.sandbox, { recursive: true, force: true });
  }
}

function whichOrFail(tool: string): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, tool);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.realpathSync(p);
    } catch {
      // not here
    }
  }
  throw new Error(`${tool} is not on PATH`);
}

/** Targets started so far: a part of each one's name, so no two ever share one. */
let targetsMade = 0;

/** What a raw target prints once its terminal is raw: before that, a Ctrl+C a case sends would end it. */
const RAW_READY = 'raw-ready';

/** A `cat` on a terminal in raw mode: Ctrl+C, Ctrl+D, Ctrl+Z are bytes it copies, so no key ends it. */
export const RAW_CAT = { command: '/bin/sh', args: ['-c', `/bin/stty raw -echo && printf ${RAW_READY} && exec cat`] };

/** Puts the session a case means in place of the placeholders of a message's JSON text. */
export function fillText(text: string, p: Placeholders): string {
  let out = text;
  for (const [k, v] of Object.entries(p)) out = out.split(JSON.stringify(k)).join(JSON.stringify(v));
  return out;
}
