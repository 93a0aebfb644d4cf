// The host control socket (docs/hosts.md#hosts, docs/protocol.md#per-session-socket-and-control-socket) and the host methods (docs/protocol.md#3-methods), against an
// in-process host with real node-pty, real bash and real Unix sockets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SessionInfo } from '../../../../src/core/methods/types';
import { RpcCallError, type Notification, type RpcClient } from '../../../../src/transport/client/rpc-client';
import { VERSION } from '../../../../src/version';
import { BASH, connect, outputListeners, rejectsWith, startHost, tempRuntimeDir, until, clientsClosed } from '../../../helpers/host';
import { childrenOf, parentOf, pidAlive } from '../../../helpers/protocol';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Per-test bound: generous for a noisy machine, finite so a hang fails instead of blocking CI. */
const TEST_TIMEOUT = 60_000;

/** Every SessionInfo field a host without HTTP or per-session TCP reports (docs/hosts.md#sessioninfo). */
const SESSION_INFO_KEYS = [
  'address',
  'args',
  'clients',
  'command',
  'createdAt',
  'cols',
  'cwd',
  'exitCode',
  'id',
  'integration',
  'name',
  'origin',
  'pid',
  'rows',
  'running',
  'secretInput',
  'workspace',
].sort();

type Host = Awaited<ReturnType<typeof startHost>>;

/** Every pid a test started, so `after()` can make sure none outlives the file. */
const startedPids = new Set<number>();

async function killLeftovers(): Promise<void> {
  const alive = () => [...startedPids].filter(pidAlive);
  // The host's close sends SIGHUP; give the shells a moment, then kill what remains, by pid.
  await until(() => alive().length === 0, 3000).catch(() => undefined);
  for (const pid of alive()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

function modeOf(p: string): number {
  return fs.lstatSync(p).mode & 0o777;
}

/** Collects notifications of one client. */
function collect(client: RpcClient): { list: Notification[]; dispose(): void } {
  const list: Notification[] = [];
  const sub = client.onNotification((n) => list.push(n));
  return { list, dispose: () => sub.dispose() };
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** SIGINT's bit in /proc's pending-signal masks (bit signo - 1). */
const SIGINT_MASK = 1n << 1n;

/** Whether a process runs (not gone, not a zombie) and whether a SIGINT waits for it (/proc). */
function signalState(pid: number): { alive: boolean; sigintPending: boolean } {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return { alive: false, sigintPending: false };
  }
  const field = (name: string) => status.match(new RegExp(`^${name}:\\s*(\\S+)`, 'm'))?.[1] ?? '';
  const pending = (name: string) => (BigInt(`0x${field(name) || '0'}`) & SIGINT_MASK) !== 0n;
  return { alive: !field('State').startsWith('Z'), sigintPending: pending('SigPnd') || pending('ShdPnd') };
}

/** A session-scoped view of a client: every call names the session (control socket) or not (session socket). */
class Sess {
  constructor(
    readonly client: RpcClient,
    readonly info: SessionInfo,
    private readonly _onControl: boolean,
  ) {}

  get id(): string {
    return this.info.id;
  }

  call<T = any>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    return this.client.request<T>(method, this._onControl ? { session: this.info.id, ...params } : params);
  }

  write(text: string): Promise<{ written: number }> {
    return this.call('pty/write', { action: [{ text }, { key: 'Enter' }] });
  }

  async screen(): Promise<string> {
    return (await this.call('pty/read')).screen;
  }

  /** Polls the screen until `pred` holds. */
  async screenUntil(pred: (screen: string) => boolean, what: string, ms = 10_000): Promise<string> {
    let last = '';
    try {
      return await until(
        async () => {
          last = await this.screen();
          return pred(last) ? last : '';
        },
        ms,
        what,
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}; screen: ${JSON.stringify(last)}`, { cause: e });
    }
  }

  /** Waits for the first prompt of a fresh bash (screens are predictable from there). */
  prompt(): Promise<string> {
    return this.screenUntil((s) => s === '$\n', 'the first prompt', 15_000);
  }

  /** The byte cursor just after the newest output (these tests stay far below the 1 MiB read cap). */
  async cursor(): Promise<number> {
    return (await this.call('pty/output', { since: 0 })).cursor;
  }
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('host control socket', () => {
  let h: Host;
  let c: RpcClient;
  const extraClients: RpcClient[] = [];
  const cwdDir = tempRuntimeDir();

  /** Creates a session through the control socket and remembers its pid. */
  async function create(params: Record<string, unknown> = {}): Promise<SessionInfo> {
    const info = await c.request<SessionInfo>('session/create', params);
    startedPids.add(info.pid);
    return info;
  }

  /** A plain bash session (no rc files, prompt "$ ") at its first prompt. */
  async function bash(params: Record<string, unknown> = {}): Promise<Sess> {
    const s = new Sess(c, await create({ ...BASH, env: { ...BASH.env }, ...params }), true);
    await s.prompt();
    return s;
  }

  async function client(address: string): Promise<RpcClient> {
    const cl = await connect(address);
    extraClients.push(cl);
    return cl;
  }

  before(async () => {
    h = await startHost();
    c = await connect(h.host.controlAddress);
  });

  after(async () => {
    for (const cl of extraClients) cl.close();
    c?.close();
    await h?.close();
    await killLeftovers();
    fs.rmSync(cwdDir, { recursive: true, force: true });
  });

  test("session/create with defaults: the user's shell, 100x30, a SessionInfo with every field", { timeout: TEST_TIMEOUT }, async () => {
    const t0 = Date.now();
    const info = await create({});
    assert.deepEqual(Object.keys(info).sort(), SESSION_INFO_KEYS);
    const shell = process.env.SHELL || '/bin/sh';
    assert.equal(info.command, shell);
    assert.deepEqual(info.args, []);
    assert.equal(info.cwd, os.homedir());
    assert.equal(info.cols, 100);
    assert.equal(info.rows, 30);
    assert.equal(info.origin, 'script');
    assert.equal(info.running, true);
    assert.equal(info.exitCode, null);
    assert.equal(info.workspace, null);
    assert.equal(info.clients, 0);
    assert.match(info.id, /^[a-z0-9]{1,12}$/);
    assert.match(info.name, new RegExp(`^${path.basename(shell)}-\\d+$`));
    assert.equal(new Date(info.createdAt).toISOString(), info.createdAt);
    assert.ok(Date.parse(info.createdAt) >= t0 - 1000);
    assert.equal(info.address, `unix:${path.join(h.dir, h.host.hostId, info.id + '.sock')}`);
    assert.ok(pidAlive(info.pid));
    assert.equal(parentOf(info.pid), process.pid);
    assert.deepEqual(await c.request('pty/kill', { session: info.id }), {});
    await until(() => !pidAlive(info.pid), 10_000, 'the default shell to end');
  });

  test('session/create with command, args, cwd, env, cols, rows and name', { timeout: TEST_TIMEOUT }, async () => {
    const info = await create({
      command: 'bash',
      args: ['--norc', '--noprofile', '-i'],
      cwd: cwdDir,
      env: { PS1: '$ ', HISTFILE: '/dev/null', SPT_FOO: 'foo value' },
      cols: 90,
      rows: 20,
      name: 'alpha',
    });
    assert.deepEqual(Object.keys(info).sort(), SESSION_INFO_KEYS);
    assert.equal(info.command, 'bash');
    assert.deepEqual(info.args, ['--norc', '--noprofile', '-i']);
    assert.equal(info.cwd, cwdDir);
    assert.equal(info.cols, 90);
    assert.equal(info.rows, 20);
    assert.equal(info.name, 'alpha');
    const s = new Sess(c, info, true);
    await s.prompt();
    const r = await s.call('pty/send', { text: 'echo "[$SPT_FOO]"; pwd' });
    // bash --norc is interactive with no script: it gets shell integration too.
    assert.equal(info.integration, true);
    assert.equal(r.waitReason, 'command_done');
    assert.equal(r.exitCode, 0);
    const lines = r.output.split('\n');
    assert.ok(lines.includes('[foo value]'), r.output);
    assert.ok(lines.includes(fs.realpathSync(cwdDir)) || lines.includes(cwdDir), r.output);
    assert.deepEqual((await s.call('pty/read')).size, { cols: 90, rows: 20 });
    // The integration's secret, printed by the shell (as `set` prints it), is masked in every copy of the output.
    const secret = await s.call('pty/send', { text: 'echo "[${__spty_nonce}]"' });
    assert.match(secret.output, /^\[\*{32}\]$/m, secret.output);
    assert.doesNotMatch((await c.request<{ data: string }>('pty/output', { session: info.id, since: 0 })).data, /\[[0-9a-f]{32}\]/);
    // Names are unique within a host: a second "alpha" is refused.
    await assert.rejects(c.request('session/create', { ...BASH, name: 'alpha' }), RpcCallError);
    // Invalid params are -32602; a name with a control character too (`list` prints names as they are).
    for (const name of ['x\x1b]52;c;cHdu\x07y', 'a\nb', 'tab\there', 'c1\u009b2J']) {
      const e = await rejectsWith(c.request('session/create', { ...BASH, name }), -32602);
      assert.match(e.message, /control characters/);
    }
    // Nor one that shows another name than it is (a bidirectional override, a zero-width space), nor spaces alone.
    for (const name of [
      'evil\u202egnp.exe',
      'al\u200bpha',
      '\u2066x\u2069',
      '\ufeffbom',
      'a\u061cb',
      'soft\u00adhyphen',
      'tag\u{e0041}',
      ' ',
      ' lead',
      'trail ',
    ]) {
      const e = await rejectsWith(c.request('session/create', { ...BASH, name }), -32602);
      assert.match(e.message, /invisible ones|with a space/, JSON.stringify(name));
    }
    // Nor half of a UTF-16 pair, in a name or in anything else the host keeps and tells again (found by an
    // outside audit: the program ran with U+FFFD, the info said the escape, and jq refused the record).
    for (const name of ['b\ud800', '\udc00x']) {
      const e = await rejectsWith(c.request('session/create', { ...BASH, name }), -32602);
      assert.match(e.message, /half of a UTF-16 pair/, JSON.stringify(name));
    }
    for (const params of [
      { command: '/bin/b\ud800' },
      { args: ['-c', 'sleep 1 #\ud800'] },
      { cwd: '/tmp/\udfff' },
      { env: { X: 'a\ud800' } },
      { env: { ['X\ud800']: 'a' } },
    ]) {
      const e = await rejectsWith(c.request('session/create', { ...BASH, ...params }), -32602);
      assert.match(e.message, /lone UTF-16 surrogate/, JSON.stringify(params));
    }
    // A pair is one character, and welcome.
    const paired = await c.request<SessionInfo>('session/create', { ...BASH, name: 'pair-\ud83d\ude00', args: [...BASH.args, '#\ud83d\ude00'] });
    assert.equal(paired.name, 'pair-😀');
    await c.request('pty/kill', { session: paired.id });
    // Nor another session's id: a selector names the id first, so that name could never be selected.
    const e = await rejectsWith(c.request('session/create', { ...BASH, name: info.id }), -32602);
    assert.match(e.message, /is the id of another session/);
    // A working directory that is a file is said to be one, not missing.
    const file = await rejectsWith(c.request('session/create', { ...BASH, cwd: '/etc/passwd' }), -32000);
    assert.match(file.message, /not a directory: \/etc\/passwd/);
    // An environment variable's name holds no "=" (the program would see another variable) and is not empty.
    for (const env of [{ 'X=Y': 'z' }, { '': 'x' }]) {
      const bad = await rejectsWith(c.request('session/create', { ...BASH, env }), -32602);
      assert.match(bad.message, /environment variable name/, JSON.stringify(env));
    }
    await rejectsWith(c.request('session/create', { cols: 0 }), -32602);
    await rejectsWith(c.request('session/create', { args: 'not-a-list' }), -32602);
  });

  test('files: runtime dir and host dir 0700, sockets 0600, record 0600 listing the session', { timeout: TEST_TIMEOUT }, async () => {
    const list = (await c.request<{ sessions: SessionInfo[] }>('session/list')).sessions;
    const alpha = list.find((s) => s.name === 'alpha');
    assert.ok(alpha, 'alpha is listed');
    const hostDir = path.join(h.dir, h.host.hostId);
    assert.equal(modeOf(h.dir), 0o700);
    assert.ok(fs.lstatSync(hostDir).isDirectory());
    assert.equal(modeOf(hostDir), 0o700);
    const control = path.join(hostDir, 'control.sock');
    assert.equal(h.host.controlAddress, `unix:${control}`);
    assert.ok(fs.lstatSync(control).isSocket());
    assert.equal(modeOf(control), 0o600);
    const sock = alpha.address.slice('unix:'.length);
    assert.equal(path.dirname(sock), hostDir);
    assert.ok(fs.lstatSync(sock).isSocket());
    assert.equal(modeOf(sock), 0o600);

    const recordFile = path.join(h.dir, `${h.host.hostId}.json`);
    assert.equal(modeOf(recordFile), 0o600);
    const rec = JSON.parse(fs.readFileSync(recordFile, 'utf8'));
    for (const k of ['hostId', 'pid', 'kind', 'version', 'startedAt', 'control', 'http', 'sessions']) assert.ok(k in rec, `record has ${k}`);
    assert.equal(rec.hostId, h.host.hostId);
    assert.equal(rec.pid, process.pid);
    assert.equal(rec.kind, 'serve');
    assert.equal(rec.version, VERSION);
    assert.equal(new Date(rec.startedAt).toISOString(), rec.startedAt);
    assert.equal(rec.control, h.host.controlAddress);
    assert.equal(rec.http, null);
    const inRecord = rec.sessions.find((s: SessionInfo) => s.id === alpha.id);
    assert.ok(inRecord, 'the record lists the session');
    assert.deepEqual(Object.keys(inRecord).sort(), SESSION_INFO_KEYS);
    assert.equal(inRecord.address, alpha.address);
    assert.equal(inRecord.name, 'alpha');
  });

  test('session/list and host/info (the record without the token)', { timeout: TEST_TIMEOUT }, async () => {
    const r = await c.request<{ sessions: SessionInfo[] }>('session/list');
    assert.deepEqual(Object.keys(r), ['sessions']);
    assert.ok(r.sessions.length >= 1);
    for (const s of r.sessions) assert.deepEqual(Object.keys(s).sort(), SESSION_INFO_KEYS);
    const alpha = r.sessions.find((s) => s.name === 'alpha')!;
    // pty/info is the listing's SessionInfo plus who typed last and what an agent's write gets now
    // (docs/protocol.md#ptyinfo), which listings leave out.
    const { lastInput, agentApproval, ...info } = await c.request<SessionInfo & { lastInput: unknown; agentApproval: unknown }>('pty/info', {
      session: 'alpha',
    });
    assert.deepEqual(info, alpha);
    assert.ok(lastInput === null || typeof lastInput === 'object');
    assert.deepEqual(agentApproval, { policy: 'allow', effective: 'allow' }, 'a host with no policy lets agents write');

    const hi = await c.request<Record<string, any>>('host/info');
    for (const k of ['hostId', 'pid', 'kind', 'version', 'startedAt', 'control', 'http', 'sessions']) assert.ok(k in hi, `host/info has ${k}`);
    assert.equal(hi.hostId, h.host.hostId);
    assert.equal(hi.pid, process.pid);
    assert.equal(hi.kind, 'serve');
    assert.equal(hi.version, VERSION);
    assert.equal(hi.control, h.host.controlAddress);
    assert.ok(!JSON.stringify(hi).includes('token'));
    assert.deepEqual(hi.sessions.map((s: SessionInfo) => s.id).sort(), r.sessions.map((s) => s.id).sort());
  });

  test('selectors: id, exact name, unique id prefix; unknown → -32001 {session}; ambiguous prefix refused', { timeout: TEST_TIMEOUT }, async () => {
    const alpha = await c.request<SessionInfo>('pty/info', { session: 'alpha' });
    const ids = (await c.request<{ sessions: SessionInfo[] }>('session/list')).sessions.map((s) => s.id);
    assert.equal((await c.request<any>('pty/status', { session: alpha.id })).pid, alpha.pid);
    assert.equal((await c.request<any>('pty/status', { session: 'alpha' })).pid, alpha.pid);
    let prefix = '';
    for (let n = 1; n < alpha.id.length; n++) {
      const p = alpha.id.slice(0, n);
      if (ids.filter((id) => id.startsWith(p)).length === 1) {
        prefix = p;
        break;
      }
    }
    assert.ok(prefix.length > 0 && prefix.length < alpha.id.length);
    assert.equal((await c.request<any>('pty/status', { session: prefix })).pid, alpha.pid);

    const e = await rejectsWith(c.request('pty/status', { session: 'no-such-session' }), -32001);
    assert.deepEqual(e.data, { session: 'no-such-session' });
    await rejectsWith(c.request('pty/read', { session: 'zzzzzzzzzz' }), -32001);
    // No selector at all is invalid params.
    await rejectsWith(c.request('pty/status', {}), -32602);
    await rejectsWith(c.request('pty/status', { session: 42 }), -32602);

    // Ambiguous: two sessions whose ids share a first character (26 letters: at most 27 tries).
    const extra: SessionInfo[] = [];
    let shared: string | undefined;
    const seen = new Map<string, number>();
    for (const id of ids) seen.set(id[0], (seen.get(id[0]) ?? 0) + 1);
    shared = [...seen].find(([, n]) => n > 1)?.[0];
    while (!shared && extra.length < 27) {
      const info = await create({ command: 'cat' });
      extra.push(info);
      seen.set(info.id[0], (seen.get(info.id[0]) ?? 0) + 1);
      if (seen.get(info.id[0])! > 1) shared = info.id[0];
    }
    assert.ok(shared);
    const amb = await c.request('pty/status', { session: shared }).then(
      () => undefined,
      (err) => err as RpcCallError,
    );
    assert.ok(amb instanceof RpcCallError, 'an ambiguous prefix does not resolve');
    assert.ok([-32001, -32602].includes(amb.code), `${amb.code}`);
    assert.match(amb.message, /ambiguous/i);
    for (const info of extra) await c.request('pty/kill', { session: info.id });
    for (const info of extra) await until(() => !pidAlive(info.pid), 10_000, 'cat to end');
  });

  test('every session method through the control socket with a session param', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash({ name: 'walk' });
    const status = await s.call('pty/status');
    assert.deepEqual(status, { running: true, exitCode: null, pid: s.info.pid });
    const read = await s.call('pty/read', { top: 1 });
    assert.deepEqual(read, { screen: '$\n', cursor: { row: 1, col: 3 }, size: { cols: 100, rows: 30 } });
    assert.deepEqual(await s.call('pty/write', { action: [{ text: 'echo walk-$((2+3))' }, { key: 'Enter' }] }), { written: 19 });
    const wait = await s.call('pty/wait', { match: 'walk-5', timeout: 10_000 });
    assert.equal(wait.matched, true);
    assert.equal(wait.reason, 'matched');
    assert.deepEqual(await s.call('pty/resize', { cols: 80, rows: 24 }), {});
    assert.deepEqual((await s.call('pty/read')).size, { cols: 80, rows: 24 });
    const info = await s.call<SessionInfo>('pty/info');
    assert.equal(info.id, s.id);
    assert.equal(info.cols, 80);
    assert.equal(info.rows, 24);
    const sb = await s.call('pty/scrollback', { lines: 5 });
    assert.deepEqual(Object.keys(sb).sort(), ['firstLine', 'lastLine', 'text', 'totalLines']);
    const out = await s.call('pty/output', { since: 0 });
    assert.ok(out.data.includes('walk-5'));
    const sent = await s.call('pty/send', { text: 'echo sent-$((3+4))' });
    assert.ok(sent.output.split('\n').includes('sent-7'));
    const sig = await s.call('pty/signal', { signal: 'SIGCONT' });
    assert.equal(sig.signal, 'SIGCONT');
    assert.ok(Number.isInteger(sig.pgid));
    const sub = await s.call('pty/subscribe');
    assert.deepEqual(Object.keys(sub), ['cursor']);
    assert.deepEqual(await s.call('pty/unsubscribe'), {});
    assert.deepEqual(await s.call('pty/kill'), {});
    await until(() => !pidAlive(s.info.pid), 10_000, 'the session to end');
    // Host methods do not take a session and are not on session sockets (checked below).
    await rejectsWith(c.request('no/such-method', {}), -32601);
  });

  test('the per-session socket: the same methods, session implied; clients counted', { timeout: TEST_TIMEOUT }, async () => {
    const ctl = await bash({ name: 'persock' });
    const direct = await client(ctl.info.address);
    const s = new Sess(direct, ctl.info, false);
    await until(async () => (await ctl.call<SessionInfo>('pty/info')).clients === 1, 5000, 'clients to count the connection');
    const info = await s.call<SessionInfo>('pty/info');
    assert.deepEqual(info, await ctl.call<SessionInfo>('pty/info'));
    assert.equal(info.clients, 1);
    assert.deepEqual(await s.call('pty/status'), { running: true, exitCode: null, pid: ctl.info.pid });
    assert.deepEqual(await s.call('pty/read'), { screen: '$\n', cursor: { row: 1, col: 3 }, size: { cols: 100, rows: 30 } });
    await s.write('echo direct-$((5*5))');
    assert.equal((await ctl.call('pty/wait', { match: 'direct-25', timeout: 10_000 })).matched, true);
    const sent = await s.call('pty/send', { text: 'echo via-$((1+1))' });
    assert.equal(sent.waitReason, 'stdin_read');
    assert.ok(sent.output.split('\n').includes('via-2'));
    // Host methods are not on a session socket; a session param is not needed.
    await rejectsWith(direct.request('session/list'), -32601);
    await rejectsWith(direct.request('session/create'), -32601);
    await rejectsWith(direct.request('host/info'), -32601);
    // A session named in params must be this one (a call copied from the control socket must not
    // act here on another): its id, a prefix of it or its name pass; another is refused, nothing done.
    assert.equal((await direct.request<any>('pty/status', { session: ctl.info.id })).running, true);
    assert.equal((await direct.request<any>('pty/status', { session: ctl.info.id.slice(0, 3) })).running, true);
    assert.equal((await direct.request<any>('pty/status', { session: 'persock' })).running, true);
    const other = await bash({ name: 'persock-other' });
    const refused = await rejectsWith(direct.request('pty/kill', { session: other.info.id }), -32602);
    assert.deepEqual(refused.data, { session: other.info.id });
    assert.match(refused.message, /serves session persock .* only/);
    await rejectsWith(direct.request('pty/status', { session: 7 }), -32602);
    // A prefix of this id that is another session's name names that one, as on the control socket.
    const named = await bash({ name: ctl.info.id.slice(0, 2) });
    await rejectsWith(direct.request('pty/kill', { session: ctl.info.id.slice(0, 2) }), -32602);
    await named.call('pty/kill');
    assert.equal((await s.call<any>('pty/status')).running, true);
    assert.equal((await other.call<any>('pty/status')).running, true);
    await other.call('pty/kill');
    direct.close();
    await until(async () => (await ctl.call<SessionInfo>('pty/info')).clients === 0, 5000, 'clients to drop');
    await ctl.call('pty/kill');
  });

  test('pty/scrollback: 1-based pages counted back from the newest line; lines max 10000', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    const r = await s.call('pty/send', { text: 'seq 1 500' });
    assert.equal(r.waitReason, 'stdin_read');
    // Retained lines: "$ seq 1 500", 1..500, and the prompt row with the cursor: 502.
    const all = ['$ seq 1 500', ...Array.from({ length: 500 }, (_, i) => String(i + 1)), '$'];
    const lines = (text: string) => text.replace(/\n$/, '').split('\n');

    const p0 = await s.call('pty/scrollback', { offset: 0, lines: 100 });
    assert.deepEqual(Object.keys(p0).sort(), ['firstLine', 'lastLine', 'text', 'totalLines']);
    assert.equal(p0.totalLines, 502);
    assert.equal(p0.lastLine, 502);
    assert.equal(p0.firstLine, 403);
    assert.deepEqual(lines(p0.text), all.slice(402, 502));

    // Defaults: offset 0, 100 lines.
    assert.deepEqual(await s.call('pty/scrollback'), p0);

    const p1 = await s.call('pty/scrollback', { offset: 100, lines: 100 });
    assert.equal(p1.lastLine, 402);
    assert.equal(p1.firstLine, 303);
    assert.equal(p1.totalLines, 502);
    assert.deepEqual(lines(p1.text), all.slice(302, 402));

    // The oldest page is cut at line 1.
    const last = await s.call('pty/scrollback', { offset: 490, lines: 100 });
    assert.equal(last.firstLine, 1);
    assert.equal(last.lastLine, 12);
    assert.deepEqual(lines(last.text), all.slice(0, 12));

    const whole = await s.call('pty/scrollback', { lines: 10000 });
    assert.equal(whole.firstLine, 1);
    assert.equal(whole.lastLine, 502);
    assert.deepEqual(lines(whole.text), all);

    const one = await s.call('pty/scrollback', { offset: 1, lines: 1 });
    assert.deepEqual([one.firstLine, one.lastLine], [501, 501]);
    assert.equal(one.text.replace(/\n$/, ''), '500');

    await rejectsWith(s.call('pty/scrollback', { lines: 10001 }), -32602);
    await rejectsWith(s.call('pty/scrollback', { lines: 0 }), -32602);
    await rejectsWith(s.call('pty/scrollback', { offset: -1 }), -32602);
    await s.call('pty/kill');
  });

  test('pty/output: incremental from a byte cursor, maxBytes, strip, waitMs blocking until new output', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    const o0 = await s.call('pty/output', { since: 0 });
    assert.deepEqual(Object.keys(o0).sort(), ['cursor', 'data', 'dropped', 'exitCode', 'running']);
    assert.ok(o0.data.includes('$ '));
    assert.ok(o0.cursor > 0);
    assert.equal(o0.dropped, 0);
    assert.equal(o0.running, true);
    assert.equal(o0.exitCode, null);
    assert.equal(bytes(o0.data), o0.cursor);
    // Default since is 0.
    assert.deepEqual(await s.call('pty/output'), o0);
    assert.deepEqual(await s.call('pty/output', { since: o0.cursor }), { data: '', cursor: o0.cursor, dropped: 0, running: true, exitCode: null });

    await s.write('echo inc-$((9+1))');
    await s.call('pty/wait', { match: 'inc-10', timeout: 10_000 });
    await s.screenUntil((x) => x.endsWith('inc-10\n$\n'), 'the prompt after inc-10');
    const o1 = await s.call('pty/output', { since: o0.cursor });
    assert.ok(o1.data.includes('inc-10'));
    assert.equal(bytes(o1.data), o1.cursor - o0.cursor);
    const all = await s.call('pty/output', { since: 0 });
    assert.equal(all.data, o0.data + o1.data);
    assert.equal(all.cursor, o1.cursor);

    // maxBytes pages through the same bytes.
    let cur = 0;
    let joined = '';
    for (let i = 0; i < 1000 && cur < all.cursor; i++) {
      const page = await s.call('pty/output', { since: cur, maxBytes: 7 });
      assert.ok(bytes(page.data) <= 7 && bytes(page.data) > 0);
      assert.equal(page.cursor, cur + bytes(page.data));
      joined += page.data;
      cur = page.cursor;
    }
    assert.equal(joined, all.data);

    // A maxBytes smaller than the character at the cursor reads that one character whole, so
    // paging moves on (it used to answer "" at the same cursor forever).
    const before = await s.cursor();
    await s.write("printf '\\342\\202\\254\\360\\237\\230\\200\\n'"); // € (3 bytes) 😀 (4), the typed line ASCII
    await s.call('pty/wait', { match: '€😀', timeout: 10_000 });
    const typed = (await s.call('pty/output', { since: before })).data as string;
    const euro = before + bytes(typed.slice(0, typed.indexOf('€😀')));
    for (const maxBytes of [1, 2]) {
      assert.deepEqual(await s.call('pty/output', { since: euro, maxBytes }), { data: '€', cursor: euro + 3, dropped: 0, running: true, exitCode: null });
    }
    assert.equal((await s.call('pty/output', { since: euro + 3, maxBytes: 3 })).data, '😀');
    assert.equal((await s.call('pty/output', { since: euro, maxBytes: 6 })).data, '€', 'a larger maxBytes still never splits one');

    // strip removes escape sequences.
    const mark = await s.cursor();
    await s.write("printf '\\033[31mRED\\033[0m-%d\\n' 5");
    await s.call('pty/wait', { match: 'RED-5', timeout: 10_000 });
    const raw = await s.call('pty/output', { since: mark });
    assert.ok(raw.data.includes('\x1b[31mRED\x1b[0m-5'), JSON.stringify(raw.data));
    const stripped = await s.call('pty/output', { since: mark, strip: true });
    assert.ok(stripped.data.includes('RED-5'), JSON.stringify(stripped.data));
    assert.ok(!stripped.data.includes('\x1b'), JSON.stringify(stripped.data));

    // Paged with a budget that cuts sequences in two, strip still removes each whole: a page ends
    // before a sequence it would cut (its cursor there), so the pages join to the same text.
    let strippedCursor = mark;
    let strippedJoined = '';
    for (let i = 0; i < 1000 && strippedCursor < stripped.cursor; i++) {
      const page = await s.call('pty/output', { since: strippedCursor, maxBytes: 12, strip: true });
      assert.ok(page.cursor > strippedCursor, `a page moves on from ${strippedCursor}`);
      strippedJoined += page.data;
      strippedCursor = page.cursor;
    }
    assert.equal(strippedJoined, stripped.data);

    // waitMs with nothing new waits, then returns empty.
    // The screen reflects every byte the host had read when the read arrived, and the prompt is
    // the last thing bash prints: from here on nothing comes until we type.
    await s.screenUntil((x) => x.endsWith('RED-5\n$\n'), 'the prompt after RED-5');
    const end = await s.cursor();
    const t0 = Date.now();
    const empty = await s.call('pty/output', { since: end, waitMs: 300 });
    assert.equal(empty.data, '');
    assert.equal(empty.cursor, end);
    assert.ok(Date.now() - t0 >= 280);

    // waitMs blocks until new output arrives, then returns it.
    let settled = false;
    const pending = s.call('pty/output', { since: end, waitMs: 30_000 }).finally(() => (settled = true));
    // Ordering fence: the same call without waitMs on the same connection. The host starts a
    // connection's calls in order and both take the same path up to the wait, so had the first
    // answered at once, its answer would have come before this one.
    const fence = await s.call('pty/output', { since: end });
    assert.equal(fence.data, '');
    assert.equal(settled, false, 'pty/output with waitMs returned before any output');
    await s.write('echo wake-$((1+1))');
    const woke = await pending;
    assert.ok(woke.data.includes('wake'), `the answer holds what was typed after the fence: ${JSON.stringify(woke.data)}`);
    assert.ok(woke.cursor > end);
    assert.equal(woke.dropped, 0);

    await rejectsWith(s.call('pty/output', { since: -1 }), -32602);
    await rejectsWith(s.call('pty/output', { maxBytes: -1 }), -32602);
    // 0 reads nothing, from where it was asked: a command that printed nothing has as many bytes.
    assert.deepEqual(await s.call('pty/output', { since: 3, maxBytes: 0 }), { data: '', cursor: 3, dropped: 0, running: true, exitCode: null });
    await s.call('pty/kill');
  });

  test('pty/send: output, waitReason stdin_read, status running; a silent sleep 1 waits for the prompt', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    const r = await s.call('pty/send', { text: 'echo hi-$((1+2))' });
    assert.deepEqual(Object.keys(r).sort(), ['output', 'status', 'truncated', 'waitReason', 'waitedMs']);
    assert.ok(r.output.split('\n').includes('hi-3'), r.output);
    assert.equal(r.waitReason, 'stdin_read');
    assert.deepEqual(r.status, { kind: 'running' });
    assert.equal(r.truncated, false);
    assert.equal(typeof r.waitedMs, 'number');

    const t0 = Date.now();
    const slept = await s.call('pty/send', { text: 'sleep 1' });
    assert.equal(slept.waitReason, 'stdin_read');
    assert.ok(Date.now() - t0 >= 900, `returned after ${Date.now() - t0} ms`);
    assert.ok(slept.waitedMs >= 900);
    assert.deepEqual(slept.status, { kind: 'running' });

    // A line longer than the terminal is wide comes back as the one line it is, not as its rows
    // (a space on the right edge included).
    const long = await s.call('pty/send', { text: `printf '%s %s\\n' "$(printf 'y%.0s' $(seq 1 $(($(tput cols) - 1))))" "$(printf 'z%.0s' $(seq 1 150))"` });
    const line = long.output.split('\n').find((l: string) => l.startsWith('yyy'));
    assert.ok(line, long.output);
    assert.match(line, /^y+ z{150}$/);
    await s.call('pty/kill');
  });

  test('pty/send: one send at a time — a concurrent second send gets -32002 (any connection)', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    const direct = await client(s.info.address);
    const first = s.call('pty/send', { text: 'sleep 3' });
    const busy = await rejectsWith(s.call('pty/send', { text: 'echo second' }), -32002);
    assert.match(busy.message, /busy/i);
    await rejectsWith(direct.request('pty/send', { text: 'echo third' }), -32002);
    const r = await first;
    assert.equal(r.waitReason, 'stdin_read');
    assert.ok(!(await s.screen()).includes('second'), 'the refused send wrote nothing');
    // Free again afterwards.
    const again = await direct.request<any>('pty/send', { text: 'echo free-$((2*2))' });
    assert.ok(again.output.split('\n').includes('free-4'));
    direct.close();
    await s.call('pty/kill');
  });

  test('pty/send: exit 3 during a send → session_exit with status exited 3', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    const r = await s.call('pty/send', { text: 'exit 3' });
    assert.equal(r.waitReason, 'session_exit');
    assert.deepEqual(r.status, { kind: 'exited', exitCode: 3, signal: null });
    assert.ok(r.output.includes('exit 3'));
    await s.call('pty/kill');
  });

  test('pty/send: python3 -i — the REPL prompt is stdin_read too', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    const start = await s.call('pty/send', { text: 'python3 -i', timeout: 20_000 });
    assert.equal(start.waitReason, 'stdin_read');
    assert.match(start.output, />>> ?$/m);
    const r = await s.call('pty/send', { text: 'print(6*7)' });
    assert.equal(r.waitReason, 'stdin_read');
    assert.ok(r.output.split('\n').includes('42'), r.output);
    const t0 = Date.now();
    const slow = await s.call('pty/send', { text: 'import time; time.sleep(1); print("done")' });
    assert.equal(slow.waitReason, 'stdin_read');
    assert.ok(Date.now() - t0 >= 900);
    assert.ok(slow.output.split('\n').includes('done'), slow.output);
    const back = await s.call('pty/send', { text: 'exit()' });
    assert.equal(back.waitReason, 'stdin_read');
    assert.match(await s.screen(), /\$\n$/);
    await s.call('pty/kill');
  });

  test(
    'pty/send: a command that clears the screen or draws above its line returns what it drew, from the top it drew at',
    { timeout: TEST_TIMEOUT },
    async () => {
      const s = await bash({ rows: 12 });
      const fill = async () => assert.equal((await s.call('pty/send', { text: 'seq 1 30' })).waitReason, 'stdin_read');
      await fill();
      // clear (ED 2 and ED 3, then home): the screen's first rows, above the row the send began on.
      const cleared = await s.call('pty/send', { text: 'clear; echo ONE; echo TWO' });
      assert.deepEqual({ output: cleared.output, truncated: cleared.truncated }, { output: 'ONE\nTWO\n$', truncated: false });
      await fill();
      // ED 2 and home in the same read as the command's echo and its line feed (a scroll).
      const erased = await s.call('pty/send', { text: "printf '\\033[2J\\033[H'; echo ONE" });
      assert.deepEqual({ output: erased.output, truncated: erased.truncated }, { output: 'ONE\n$', truncated: false });
      await fill();
      // A cleared screen, then more lines than it holds: every one, and no row from before.
      const many = await s.call('pty/send', { text: 'clear; seq 101 125' });
      assert.equal(many.output, `${Array.from({ length: 25 }, (_, i) => 101 + i).join('\n')}\n$`);
      await fill();
      // The cursor sent one row up and printed over: from that row.
      const over = await s.call('pty/send', { text: "printf 'a\\nb\\n\\033[1Ax\\n'" });
      assert.equal(over.output, "$ printf 'a\\nb\\n\\033[1Ax\\n'\na\nx\n$");
      // A plain command: from its own line, nothing above.
      assert.equal((await s.call('pty/send', { text: 'echo plain' })).output, '$ echo plain\nplain\n$');
      await s.call('pty/kill');
    },
  );

  test('pty/send: a small timeout on sleep 5 → timeout; submit:false types without Enter', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    const r = await s.call('pty/send', { text: 'sleep 5', timeout: 300 });
    assert.equal(r.waitReason, 'timeout');
    assert.deepEqual(r.status, { kind: 'running' });
    assert.ok(r.waitedMs >= 290);
    await s.call('pty/signal', { signal: 'SIGINT' });
    await s.screenUntil((x) => /\$ sleep 5\n(\^C)?\n?\$\n$/.test(x), 'the prompt after interrupting sleep');

    await s.write('clear');
    await s.screenUntil((x) => x === '$\n', 'a cleared screen');
    const typed = await s.call('pty/send', { text: 'echo nosub-$((5+5))', submit: false });
    assert.equal(typed.waitReason, 'stdin_read');
    assert.deepEqual(typed.status, { kind: 'running' });
    const screen = await s.screen();
    assert.equal(screen, '$ echo nosub-$((5+5))\n', 'typed, not run');
    assert.deepEqual((await s.call('pty/read')).cursor, { row: 1, col: 22 });
    await s.call('pty/write', { action: { key: 'Enter' } });
    assert.equal((await s.call('pty/wait', { regex: '^nosub-10$', timeout: 10_000 })).matched, true);
    await s.call('pty/kill');
  });

  test(
    "pty/send in a young session: a command running is not its first prompt to wait for, and the wait keeps within the call's timeout",
    { timeout: TEST_TIMEOUT },
    async () => {
      const s = await bash();
      // The session is under a second old: a send waits for its first prompt, which is already there.
      const sleeping = await s.call('pty/send', { text: 'sleep 30', timeout: 100 });
      assert.equal(sleeping.waitReason, 'timeout');
      // While sleep runs, a send is typed ahead and times out after its own 100 ms, not when the session is 3 s old.
      const ahead = await s.call('pty/send', { text: 'echo ahead', timeout: 100 });
      assert.equal(ahead.waitReason, 'timeout');
      assert.ok(ahead.waitedMs < 1000, `waited ${ahead.waitedMs} ms of a 100 ms timeout`);
      await s.call('pty/kill');
    },
  );

  test('pty/wait extended: regex, since (escapes removed), idleMs → idle, session_exit', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    await s.write('echo rx-$((6*7))');
    const w = await s.call('pty/wait', { regex: '^rx-\\d+$', timeout: 10_000 });
    assert.equal(w.matched, true);
    assert.equal(w.reason, 'matched');
    assert.ok(w.screen.includes('rx-42\n'));
    for (const k of ['matched', 'screen', 'cursor', 'size', 'waitedMs', 'reason']) assert.ok(k in w, `has ${k}`);
    await rejectsWith(s.call('pty/wait', { regex: '(', timeout: 100 }), -32602);
    await rejectsWith(s.call('pty/wait', { match: 'a', regex: 'a', timeout: 100 }), -32602);

    // since: only output after the cursor counts, even when the screen already shows the text.
    await s.screenUntil((x) => x.endsWith('rx-42\n$\n'), 'the prompt after rx-42');
    const c1 = await s.cursor();
    const old = await s.call('pty/wait', { match: 'rx-42', since: c1, timeout: 300 });
    assert.equal(old.matched, false);
    assert.equal(old.reason, 'timeout');
    assert.equal((await s.call('pty/wait', { match: 'rx-42', timeout: 300 })).matched, true);
    // The text is split by escape sequences in the raw output; they are removed before matching.
    await s.write("printf '\\033[1mBO\\033[0mLD-%d\\n' 7");
    const bold = await s.call('pty/wait', { match: 'BOLD-7', since: c1, timeout: 10_000 });
    assert.equal(bold.matched, true);
    assert.equal(bold.reason, 'matched');
    const rxSince = await s.call('pty/wait', { regex: 'BOLD-\\d', since: c1, timeout: 10_000 });
    assert.equal(rxSince.reason, 'matched');

    // idleMs: no output for that long ends the wait.
    await s.screenUntil((x) => x.endsWith('BOLD-7\n$\n'), 'the prompt after BOLD-7');
    const idle = await s.call('pty/wait', { match: 'never-printed-xyz', idleMs: 300, timeout: 20_000 });
    assert.equal(idle.reason, 'idle');
    assert.equal(idle.matched, false);
    assert.ok(idle.waitedMs >= 250, `${idle.waitedMs}`);

    // session_exit: the program ends while waiting.
    let waitSettled = false;
    const waiting = s.call('pty/wait', { match: 'never-printed-xyz', timeout: 20_000 }).finally(() => (waitSettled = true));
    // Ordering fence: a call started after the wait on the same connection has answered, so the
    // wait is listening before bash is told to exit.
    await s.call('pty/status');
    assert.equal(waitSettled, false, 'the wait is still waiting');
    await s.write('exit 0');
    const ended = await waiting;
    assert.equal(ended.reason, 'session_exit');
    assert.equal(ended.matched, false);
    await s.call('pty/kill');
  });

  test('pty/signal: SIGINT reaches the foreground job (not the shell), also after stty -isig', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    const shellPid = s.info.pid;
    const sleeper = async (): Promise<{ pid: number; comm: string }> =>
      (await until(() => childrenOf(shellPid).find((p) => p.comm === 'sleep'), 10_000, 'sleep to start'))!;

    await s.write('sleep 100');
    const sl = await sleeper();
    const r = await s.call('pty/signal', { signal: 'SIGINT' });
    assert.deepEqual(Object.keys(r).sort(), ['pgid', 'signal']);
    assert.equal(r.signal, 'SIGINT');
    assert.notEqual(r.pgid, shellPid);
    assert.equal(r.pgid, sl.pid, "the job's process group");
    await until(() => !pidAlive(sl.pid), 10_000, 'sleep to be interrupted');
    assert.ok(pidAlive(shellPid), 'the shell survives');
    assert.equal((await s.call('pty/send', { text: 'echo after-$((1+1))' })).waitReason, 'stdin_read');

    // With isig off, Ctrl+C is just a byte to the program; pty/signal still interrupts.
    assert.equal((await s.call('pty/send', { text: 'stty -isig' })).waitReason, 'stdin_read');
    await s.write('sleep 100');
    const sl2 = await sleeper();
    const beforeCtrlC = await s.cursor();
    assert.deepEqual(await s.call('pty/write', { action: { key: 'Ctrl+C' } }), { written: 1 });
    // Ordering fence: the terminal echoes the byte as ^C once its line discipline has taken it,
    // and with isig on it would have signalled the job at that same moment. So from here on a
    // SIGINT would show: the process gone, a zombie, or the signal pending.
    await until(async () => (await s.call('pty/output', { since: beforeCtrlC })).data.includes('^C'), 10_000, 'the ^C echo');
    assert.deepEqual(signalState(sl2.pid), { alive: true, sigintPending: false }, 'Ctrl+C does not interrupt with -isig');
    const r2 = await s.call('pty/signal', { signal: 'SIGINT' });
    assert.equal(r2.pgid, sl2.pid);
    await until(() => !pidAlive(sl2.pid), 10_000, 'sleep to be interrupted by pty/signal');
    assert.equal((await s.call('pty/send', { text: 'stty isig' })).waitReason, 'stdin_read');

    await rejectsWith(s.call('pty/signal', { signal: 'SIGFOO' }), -32602);
    await rejectsWith(s.call('pty/signal', {}), -32602);
    await s.call('pty/kill');
  });

  test(
    'pty/subscribe (control socket): live only without since, replay with since 0, session-tagged, pty/exit, unsubscribe',
    { timeout: TEST_TIMEOUT },
    async () => {
      const s = await bash();
      await s.write('echo before-$((1+1))');
      // The prompt on the screen is bash's last output (the screen reflects every byte read so far).
      await s.screenUntil((x) => x.endsWith('before-2\n$\n'), 'before-2');

      // Live: no replay; notifications start at the returned cursor.
      const live = await client(h.host.controlAddress);
      const liveNotes = collect(live);
      const sub = await live.request<{ cursor: number }>('pty/subscribe', { session: s.id });
      assert.deepEqual(Object.keys(sub), ['cursor']);
      assert.equal(sub.cursor, await s.cursor());
      await s.write('echo live-$((2+2))');
      const outputs = () => liveNotes.list.filter((n) => n.method === 'pty/output');
      await until(
        () =>
          outputs()
            .map((n) => n.params.data)
            .join('')
            .includes('live-4'),
        10_000,
        'live-4 notification',
      );
      let prev = sub.cursor;
      for (const n of outputs()) {
        assert.equal(n.params.session, s.id);
        assert.equal(typeof n.params.data, 'string');
        assert.equal(n.params.cursor, prev + bytes(n.params.data as string), 'each cursor is just after its data');
        prev = n.params.cursor as number;
      }
      assert.ok(
        !outputs()
          .map((n) => n.params.data)
          .join('')
          .includes('before-2'),
        'no replay without since',
      );

      // Replay from 0, then live.
      const replay = await client(h.host.controlAddress);
      const replayNotes = collect(replay);
      const sub0 = await replay.request<{ cursor: number }>('pty/subscribe', { session: s.id, since: 0 });
      assert.equal(sub0.cursor, 0);
      const replayed = () =>
        replayNotes.list
          .filter((n) => n.method === 'pty/output')
          .map((n) => n.params.data)
          .join('');
      await until(() => replayed().includes('before-2') && replayed().includes('live-4'), 10_000, 'the replay');
      await s.write('echo again-$((4+4))');
      await until(() => replayed().includes('again-8'), 10_000, 'live output after the replay');
      await until(
        () =>
          outputs()
            .map((n) => n.params.data)
            .join('')
            .includes('again-8'),
        10_000,
        'again-8 on the live subscriber',
      );
      const all = await s.call('pty/output', { since: 0 });
      await until(() => replayed() === all.data, 5000, 'the replay + live stream to equal the output');

      // Unsubscribe stops notifications on that connection only.
      assert.deepEqual(await live.request('pty/unsubscribe', { session: s.id }), {});
      const countAfterUnsub = liveNotes.list.length;
      await s.write('echo quiet-$((3+3))');
      await until(() => replayed().includes('quiet-6'), 10_000, 'quiet-6 on the other subscriber');
      // An answer on the unsubscribed connection comes after any notification the host wrote to it before.
      await live.request('pty/status', { session: s.id });
      assert.equal(liveNotes.list.length, countAfterUnsub, 'no notifications after pty/unsubscribe');

      // Exit: the remaining subscriber gets the rest of the output, then pty/exit.
      await s.write('exit 7');
      await until(() => replayNotes.list.some((n) => n.method === 'pty/exit'), 10_000, 'pty/exit');
      const exit = replayNotes.list.find((n) => n.method === 'pty/exit')!;
      assert.deepEqual(exit.params, { session: s.id, exitCode: 7, signal: null });
      assert.equal(replayNotes.list[replayNotes.list.length - 1].method, 'pty/exit', 'pty/exit comes last');
      const final = await s.call('pty/output', { since: 0 });
      assert.equal(replayed(), final.data);
      liveNotes.dispose();
      replayNotes.dispose();
      await s.call('pty/kill');
    },
  );

  test('pty/subscribe on the per-session socket: data and cursor, no session field', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    const direct = await client(s.info.address);
    const notes = collect(direct);
    const sub = await direct.request<{ cursor: number }>('pty/subscribe', {});
    await s.write('echo direct-$((8+8))');
    const data = () =>
      notes.list
        .filter((n) => n.method === 'pty/output')
        .map((n) => n.params.data)
        .join('');
    await until(() => data().includes('direct-16'), 10_000, 'notifications');
    const first = notes.list[0];
    assert.equal(first.method, 'pty/output');
    assert.deepEqual(Object.keys(first.params).sort(), ['cursor', 'data']);
    assert.equal(first.params.cursor, sub.cursor + bytes(first.params.data as string));
    await s.write('exit 2');
    await until(() => notes.list.some((n) => n.method === 'pty/exit'), 10_000, 'pty/exit');
    assert.deepEqual(notes.list.find((n) => n.method === 'pty/exit')!.params, { exitCode: 2, signal: null });
    notes.dispose();
    direct.close();
    await s.call('pty/kill');
  });

  test('pty/kill on the control socket removes that session only; the host keeps serving', { timeout: TEST_TIMEOUT }, async () => {
    const a = await bash();
    const b = await bash();
    const aSock = a.info.address.slice('unix:'.length);
    assert.ok(fs.existsSync(aSock));
    assert.deepEqual(await a.call('pty/kill'), {});
    await until(() => !fs.existsSync(aSock), 10_000, 'the session socket to disappear');
    await until(() => !pidAlive(a.info.pid), 10_000, 'the shell to end');
    const ids = (await c.request<{ sessions: SessionInfo[] }>('session/list')).sessions.map((x) => x.id);
    assert.ok(!ids.includes(a.id));
    assert.ok(ids.includes(b.id));
    const e = await rejectsWith(c.request('pty/status', { session: a.id }), -32001);
    assert.deepEqual(e.data, { session: a.id });
    const recordFile = path.join(h.dir, `${h.host.hostId}.json`);
    await until(
      () => {
        const rec = JSON.parse(fs.readFileSync(recordFile, 'utf8'));
        const recIds = rec.sessions.map((x: SessionInfo) => x.id);
        return !recIds.includes(a.id) && recIds.includes(b.id);
      },
      5000,
      'the record to drop the killed session',
    );
    // The other session and the host are unaffected.
    assert.equal((await b.call('pty/send', { text: 'echo still-$((1+0))' })).waitReason, 'stdin_read');
    assert.ok(fs.existsSync(b.info.address.slice('unix:'.length)));
    const fresh = await create({ command: 'cat' });
    assert.equal(fresh.running, true);
    await c.request('pty/kill', { session: fresh.id });
    await b.call('pty/kill');
  });

  test('pty/kill while others wait: subscribers get pty/exit, a waiting wait, send and output end with the session', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash();
    const cursor = await s.cursor();
    const subscriber = await client(h.host.controlAddress);
    const notes = collect(subscriber);
    await subscriber.request('pty/subscribe', { session: s.id });
    // Each waiting call on its own connection; their own deadlines are far beyond the test's.
    const waiting = (await client(h.host.controlAddress)).request<any>('pty/wait', { session: s.id, match: 'NEVER-SEEN', timeout: 600_000 });
    const sending = (await client(h.host.controlAddress)).request<any>('pty/send', { session: s.id, text: 'sleep 600', timeout: 600_000 });
    await until(async () => (await s.call('pty/output', { since: cursor })).data.includes('sleep 600\r\n'), 10_000, 'the send to start');
    // A read that waits for output: bash may still print a little after the echo (bracketed paste
    // off), which would answer it early; then read again from there, until one is seen waiting.
    const session = h.host.registry.get(s.id)!;
    const poller = await client(h.host.controlAddress);
    let polling!: Promise<any>;
    for (;;) {
      const listening = outputListeners(session);
      let settled = false;
      polling = poller.request<any>('pty/output', { session: s.id, since: await s.cursor(), waitMs: 600_000 }).finally(() => (settled = true));
      await until(() => settled || outputListeners(session) > listening, 10_000, 'the read to wait');
      if (!settled) break;
    }
    assert.deepEqual(await c.request('pty/kill', { session: s.id }), {});
    const [w, o, r] = await Promise.all([waiting, polling, sending]);
    assert.equal(w.reason, 'session_exit');
    assert.equal(w.matched, false);
    assert.equal(o.running, false);
    assert.equal(r.waitReason, 'session_exit');
    assert.equal(r.status.kind, 'exited');
    await until(() => notes.list.some((n) => n.method === 'pty/exit'), 10_000, 'pty/exit to the subscriber');
    const exit = notes.list.find((n) => n.method === 'pty/exit')!;
    assert.equal(exit.params.session, s.id);
    assert.equal(exit.params.signal, 'SIGHUP', 'the session was hung up, as a closing terminal does');
    assert.equal(exit.params.exitCode, 129);
    await rejectsWith(c.request('pty/status', { session: s.id }), -32001);
    notes.dispose();
  });

  test('an exited session stays listed (running false, exitCode) and readable', { timeout: TEST_TIMEOUT }, async () => {
    const s = await bash({ name: 'goner' });
    await s.write('echo last-words-$((2+3))');
    await s.screenUntil((x) => x.includes('last-words-5\n$'), 'last words');
    const r = await s.call('pty/send', { text: 'exit 5' });
    assert.equal(r.waitReason, 'session_exit');
    assert.deepEqual(r.status, { kind: 'exited', exitCode: 5, signal: null });
    const listed = (await c.request<{ sessions: SessionInfo[] }>('session/list')).sessions.find((x) => x.id === s.id);
    assert.ok(listed, 'still listed');
    assert.equal(listed.running, false);
    assert.equal(listed.exitCode, 5);
    assert.deepEqual(await s.call('pty/status'), { running: false, exitCode: 5, pid: s.info.pid });
    const info = await c.request<SessionInfo>('pty/info', { session: 'goner' });
    assert.equal(info.running, false);
    assert.equal(info.exitCode, 5);
    const screen = await s.call('pty/read');
    assert.ok(screen.screen.includes('last-words-5\n'));
    assert.ok(screen.screen.includes('$ exit 5'));
    const out = await s.call('pty/output', { since: 0 });
    assert.ok(out.data.includes('last-words-5'));
    assert.equal(out.running, false);
    assert.equal(out.exitCode, 5);
    const sb = await s.call('pty/scrollback');
    assert.ok(sb.text.includes('last-words-5'));
    // pty/output with waitMs on an exited session returns at once rather than blocking.
    const quick = await s.call('pty/output', { since: out.cursor, waitMs: 30_000 });
    assert.equal(quick.data, '');
    assert.equal(quick.running, false);
    // The discovery record says so too.
    const recordFile = path.join(h.dir, `${h.host.hostId}.json`);
    await until(
      () => {
        const rec = JSON.parse(fs.readFileSync(recordFile, 'utf8'));
        const e = rec.sessions.find((x: SessionInfo) => x.id === s.id);
        return e && e.running === false && e.exitCode === 5;
      },
      5000,
      'the record to show the exit',
    );
    // Killing it removes it.
    await s.call('pty/kill');
    await until(async () => !(await c.request<{ sessions: SessionInfo[] }>('session/list')).sessions.some((x) => x.id === s.id), 5000, 'removal');
  });
});

describe('a host with a small ring (ringBytes 4096)', () => {
  let h: Host;
  let c: RpcClient;

  before(async () => {
    h = await startHost({ ringBytes: 4096 });
    c = await connect(h.host.controlAddress);
  });

  after(async () => {
    c?.close();
    await h?.close();
    await killLeftovers();
  });

  test('pty/output and a replaying pty/subscribe report dropped bytes past the ring', { timeout: TEST_TIMEOUT }, async () => {
    const info = await c.request<SessionInfo>('session/create', { ...BASH, env: { ...BASH.env } });
    startedPids.add(info.pid);
    const s = new Sess(c, info, true);
    await s.prompt();
    const r = await s.call('pty/send', { text: 'seq 1 3000' });
    assert.equal(r.waitReason, 'stdin_read');
    const out = await s.call('pty/output', { since: 0 });
    assert.ok(out.dropped > 0, `dropped ${out.dropped}`);
    assert.ok(bytes(out.data) <= 4096);
    assert.ok(bytes(out.data) > 3000);
    assert.equal(out.dropped + bytes(out.data), out.cursor, 'dropped + retained = everything since 0');
    assert.ok(out.cursor > 14_000, 'seq 1 3000 printed ~14 KB');
    assert.ok(out.data.includes('3000'));
    // Inside the ring nothing is dropped.
    const near = await s.call('pty/output', { since: out.cursor - 100 });
    assert.equal(near.dropped, 0);
    assert.equal(bytes(near.data), 100);

    const notes = collect(c);
    const sub = await s.call<{ cursor: number }>('pty/subscribe', { since: 0 });
    assert.equal(sub.cursor, out.dropped, 'the replay starts at the oldest retained byte');
    await until(() => notes.list.length > 0, 5000, 'the replay');
    const first = notes.list[0];
    assert.equal(first.method, 'pty/output');
    assert.equal(first.params.dropped, out.dropped);
    assert.equal(first.params.session, s.id);
    await until(() => notes.list.map((n) => n.params.data).join('') === out.data, 5000, 'the full replay');
    await s.call('pty/unsubscribe');
    notes.dispose();
    await s.call('pty/kill');
  });
});
