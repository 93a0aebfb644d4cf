import * as os from 'node:os';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { IDisposable } from '../core/base/lifecycle';
import { within } from '../core/base/when-first';
import { RpcClient } from '../transport/client/rpc-client';
import { type HostsConfig, unknownHostError } from './hosts-config';
import { isAlive } from './discovery';
import { processTree } from '../core/process/proc/process-tree';

/**
 * How long a bridge may take to answer its first call: an ssh handshake to a far machine, a
 * container exec, and the per-user host started there; long enough for a person to type a key's
 * passphrase at ssh's prompt, short enough that a command that never speaks does not hang us.
 */
const CONNECT_TIMEOUT_MS = 30_000;
/**
 * How long a listing across hosts waits for a remote host that answered its first call: a host
 * that stops answering must not hold up the others' sessions (`list`, `shared-pty mcp`).
 */
export const REMOTE_LIST_WAIT_MS = 10_000;
/** How long a remote host may take to open a session (a program starts there in well under a second). */
export const REMOTE_OPEN_WAIT_MS = 15_000;
/**
 * How long a host that gave no answer within CONNECT_TIMEOUT_MS is not tried again: each try costs
 * a caller that long, and `shared-pty mcp` looks across hosts at every listing and every selector
 * without a host name. A host whose command fails at once is tried again at once (it costs nothing).
 */
const SILENT_RETRY_MS = 60_000;
/** How much of a bridge command's stderr is kept for an error message: its last few lines. */
const STDERR_TAIL_BYTES = 2048;
/** How long to wait, after a bridge's output ended, for its process to exit and say why. */
const EXIT_WAIT_MS = 2000;
/**
 * How long a process that let its bridges go waits for them at most: one in use gets EXIT_WAIT_MS
 * to end by its input, then SIGTERM and EXIT_WAIT_MS more before SIGKILL; a moment to see them end.
 */
const BRIDGES_END_WAIT_MS = EXIT_WAIT_MS * 2 + 1000;
/** How often to look, once a bridge command has exited, whether what it started has exited too. */
const GONE_POLL_MS = 50;

/**
 * The exit status of `shared-pty bridge` when the host it joined is gone (killed, crashed), its
 * sessions with it; 1 is a connection that only closed. ssh, `docker exec` and `kubectl exec` pass it on.
 */
export const BRIDGE_HOST_GONE_STATUS = 3;

/** A remote host could not be reached, or its connection dropped: the message names the host and the command. */
export class RemoteHostError extends Error {
  constructor(
    message: string,
    readonly host: string,
  ) {
    super(message);
    this.name = 'RemoteHostError';
  }
}

/** One running bridge command and the client over its stdin and stdout. */
interface Link {
  child: ChildProcessWithoutNullStreams;
  client: RpcClient;
  /** The end of its stderr, for messages. */
  stderr(): string;
  /** Resolves once the process has exited (or EXIT_WAIT_MS has passed), with how it ended. */
  ended(): Promise<string>;
  /** Its first call was answered: it is in use, and may be let go gently (its stdin closed first). */
  connected: boolean;
  /** It is being let go (_stop). */
  stopping: boolean;
  /** The processes signalled when it was ended (`terminate`): the command and what it started. */
  tree?: number[];
  /** Resolves once the command and what it started have all exited. */
  gone: Promise<void>;
}

/**
 * Every bridge command this process started and that has not ended yet, whichever RemoteHosts
 * started it: what must not outlive the process (docs/hosts.md#remote-hosts). endEveryBridge ends
 * them on a signal; a process that exits before they end (`process.exit`) kills them as it goes.
 */
const unfinished = new Set<Link>();
/** Set by endEveryBridge: the process is ending by a signal, and no bridge is to be used or reported any more. */
let ending = false;

/**
 * What waits on a bridge while the process ends by a signal: nothing, ever. The process ends
 * before it would settle, so a bridge ended on purpose is never reported as a failure.
 */
function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}

/** Sends `signal` to each process of `pids` that is still there. */
function signalEach(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const p of pids) {
    try {
      if (isAlive(p)) process.kill(p, signal);
    } catch {
      // Exited meanwhile.
    }
  }
}

/**
 * The command's own process and what it started, the youngest first, with those signalled before.
 * Once the command has exited (and Node has reaped it) its pid may be another process's: left out.
 */
function treeOf(link: Link): number[] {
  const { pid, exitCode, signalCode } = link.child;
  const exited = pid === undefined || exitCode !== null || signalCode !== null;
  const now = exited ? [] : processTree(pid);
  return [...new Set([...now, ...(link.tree ?? [])])].filter((p) => !exited || p !== pid);
}

/**
 * Ends a bridge command with what it started: SIGTERM now to the shell that runs it and to the ssh
 * or sleep under that shell, by their pids (read before any is signalled: once the shell ends, what
 * it started belongs to init), and SIGKILL EXIT_WAIT_MS later to whatever of them is left (a `trap
 * '' TERM`, which what it runs inherits). The wait keeps a CLI command alive until then.
 */
function terminate(link: Link): void {
  if (link.tree) return;
  link.tree = treeOf(link);
  signalEach(link.tree, 'SIGTERM');
  const kill = setTimeout(() => killTree(link), EXIT_WAIT_MS);
  void link.gone.then(() => clearTimeout(kill));
}

/** A process that exits at once (`process.exit`) kills the bridges still running: nothing of them outlives it. */
function killUnfinished(): void {
  for (const link of unfinished) killTree(link);
}

/** Rounds of reading the tree again for processes started while it was being stopped. */
const STOP_ROUNDS = 4;

/**
 * SIGKILL to the command and what it started. Each is stopped first, parents before their
 * children, and the tree read again until no new process shows: killed youngest first and
 * running, a shell that ignores SIGTERM started the next command of its line (`sleep 1000; sleep
 * 1000`) between its child's SIGKILL and its own, and that one was in no list (an outside audit
 * found it outliving the CLI command). A stopped process starts nothing.
 */
function killTree(link: Link): void {
  const known = new Set<number>();
  for (let round = 0; round < STOP_ROUNDS; round++) {
    // From each process known and still there too: once the command's own shell has ended (the
    // SIGTERM), what it started is no longer found from it, and what those start neither.
    const roots = [...known].filter((p) => isAlive(p));
    const found = [...new Set([...treeOf(link), ...roots.flatMap((p) => processTree(p))])].filter((p) => !known.has(p));
    if (found.length === 0) break;
    signalEach([...found].reverse(), 'SIGSTOP');
    for (const p of found) known.add(p);
  }
  signalEach([...known], 'SIGKILL');
}

/**
 * Ends every bridge command of this process now, with what each started (SIGTERM, then SIGKILL
 * EXIT_WAIT_MS later), for a process ending by a signal: resolves once they are gone. From then on
 * no bridge is started, and nothing that waits on one settles (the process ends first).
 */
export async function endEveryBridge(): Promise<void> {
  ending = true;
  const links = [...unfinished];
  for (const link of links) {
    link.client.close();
    terminate(link);
  }
  // SIGKILL ends the last of them at EXIT_WAIT_MS; a moment more for their exits to be seen.
  await whenBridgesGone(EXIT_WAIT_MS + 1000);
}

/**
 * Resolves once every bridge command of this process has ended, or `ms` has passed: for a process
 * about to exit after letting them go (RemoteHosts.dispose), so their SIGTERM cleanup is not cut short.
 */
export async function whenBridgesGone(ms = BRIDGES_END_WAIT_MS): Promise<void> {
  const links = [...unfinished];
  await within(Promise.all(links.map((l) => l.gone)), ms, () => new Error('late')).catch(() => undefined);
}

/**
 * The remote hosts of hosts.json, as one client process reaches them (docs/hosts.md#remote-hosts):
 * at most one bridge command per host, started on first use and shared by every session and call
 * of this process; when it drops, the next use starts it again.
 */
export class RemoteHosts implements IDisposable {
  private readonly _links = new Map<string, Promise<Link>>();
  /** The last drop of each host, as a line. */
  private readonly _drops = new Map<string, Promise<string>>();
  /** For each host whose host over there was gone at a drop: the line that said so. */
  private readonly _goneLines = new Map<string, string>();
  /** Hosts that gave no answer in time: their error, and until when it stands (SILENT_RETRY_MS). */
  private readonly _silent = new Map<string, { error: RemoteHostError; until: number }>();
  /** Every bridge command it started that has not exited yet, connected or still connecting. */
  private readonly _running = new Set<Link>();
  private _disposed = false;

  /** `onDrop` hears, once per drop, one line saying that a host's connection ended. */
  constructor(
    readonly config: HostsConfig,
    private readonly _onDrop?: (message: string, host: string) => void,
  ) {}

  /** Its connections are being closed (the client process is ending): what fails now is not news. */
  get closing(): boolean {
    return this._disposed || ending;
  }

  /** The configured host names. */
  get names(): string[] {
    return [...this.config.hosts.keys()];
  }

  /** The command that reaches `name` (an error naming the config file for an unknown name). */
  commandOf(name: string): string {
    const command = this.config.hosts.get(name);
    if (command === undefined) throw unknownHostError(this.config, name);
    return command;
  }

  /**
   * `name`'s sessions, as its host lists them, within REMOTE_LIST_WAIT_MS once connected (the
   * connection has its own CONNECT_TIMEOUT_MS); an answer that is not a session list is an error.
   */
  async listSessions<S>(name: string, call: (client: RpcClient) => Promise<unknown>): Promise<S[]> {
    const client = await this.connect(name);
    const answer = (await this.within(name, call(client), REMOTE_LIST_WAIT_MS, 'list its sessions')) as { sessions?: unknown } | null;
    if (!Array.isArray(answer?.sessions) || !answer.sessions.every(isSessionLike))
      throw new RemoteHostError(`host "${name}" answered something that is not a list of sessions`, name);
    return answer.sessions as S[];
  }

  /** `call`'s answer, or an error naming the host when it has none within `ms` (`doing`: what it was asked, as "list its sessions"). */
  within<T>(name: string, call: Promise<T>, ms: number, doing: string): Promise<T> {
    return within(call, ms, () => new RemoteHostError(`host "${name}" did not ${doing} within ${ms / 1000} s (${this.config.hosts.get(name)})`, name));
  }

  /** The connection to `name`'s bridge: the running one, or a new one. */
  async connect(name: string): Promise<RpcClient> {
    const command = this.commandOf(name);
    if (ending) return never();
    if (this._disposed) throw new RemoteHostError(`host "${name}": the connection is being closed`, name);
    const silent = this._silent.get(name);
    if (silent && Date.now() < silent.until) throw silent.error;
    let link = this._links.get(name);
    if (!link) {
      link = this._start(name, command);
      this._links.set(name, link);
      link.catch(() => this._links.delete(name));
    }
    return (await link).client;
  }

  /** Ends `name`'s connection now (one that stalled: nothing came back on it); the next use makes a new one. */
  drop(name: string): void {
    const link = this._links.get(name);
    if (!link) return;
    this._links.delete(name);
    void link.then(
      (l) => this._stop(l, true),
      () => undefined,
    );
  }

  /** The line that said `name`'s host over there was gone at its last drop, if it was (its sessions ended with it). */
  goneLine(name: string): string | undefined {
    return this._goneLines.get(name);
  }

  /**
   * The one line that says `name`'s connection dropped and why (its command's exit status and the
   * end of its stderr), once the drop is known.
   */
  async dropMessage(name: string): Promise<string> {
    // A drop of the process's own making (a signal ends it) is no news.
    if (ending) return never();
    return (await this._drops.get(name)) ?? `the connection to host "${name}" (${this.config.hosts.get(name)}) closed; it is made again on the next use`;
  }

  private async _start(name: string, command: string): Promise<Link> {
    // Through the shell, as ssh's ProxyCommand is: the command may quote, set variables, use ~.
    const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'pipe', 'pipe'] });
    const gone = new Promise<void>((resolve) => {
      child.once('error', () => resolve());
      // The command's exit, then that of what it was seen to start (a sleep is reaped a moment
      // later), looked for until SIGKILL has had its time; never a wait that keeps us alive.
      child.once('close', () => {
        const until = Date.now() + 2 * EXIT_WAIT_MS;
        const check = () => (treeOf(link).some(isAlive) && Date.now() < until ? setTimeout(check, GONE_POLL_MS).unref() : resolve());
        check();
      });
    });
    let tail = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (tail = (tail + d).slice(-STDERR_TAIL_BYTES)));
    let exit: string | undefined;
    let exitCode: number | null = null;
    const exited = new Promise<string>((resolve) => {
      child.once('error', (e) => resolve((exit = `it could not start: ${e.message}`)));
      child.once('close', (code, signal) => {
        exitCode = code;
        resolve((exit = signal ? `it was ended by ${signal}` : `it exited with status ${code}${killedBy(code)}`));
      });
    });
    const stderr = () => tail.trim().split('\n').filter(Boolean).slice(-3).join(' / ');
    // What it printed that is not JSON-RPC (a banner, an rc file's echo, the wrong program), said if no answer comes.
    let stray: string | undefined;
    let head = '';
    const lookForStray = (d: Buffer) => {
      head = (head + d.toString('utf8')).slice(0, STDERR_TAIL_BYTES);
      stray = head
        .split('\n')
        .find((l) => l.trim() !== '' && !l.trimStart().startsWith('{'))
        ?.trim()
        .slice(0, 200);
      if (stray !== undefined || head.length >= STDERR_TAIL_BYTES) child.stdout.off('data', lookForStray);
    };
    child.stdout.on('data', lookForStray);
    const ended = async () => {
      await Promise.race([exited, new Promise((r) => setTimeout(r, EXIT_WAIT_MS).unref())]);
      const err = stderr();
      return `${exit ?? 'its output ended'}${err ? `: ${err}` : ''}`;
    };
    // A broken pipe to a bridge that ended is a drop, which the client's close reports.
    child.stdin.on('error', () => undefined);
    const client = RpcClient.overStream({
      input: child.stdout,
      output: child.stdin,
      destroy: () => {
        child.stdin.destroy();
        child.stdout.destroy();
      },
    });
    const link: Link = { child, client, stderr, ended, connected: false, stopping: false, gone };
    if (!process.listeners('exit').includes(killUnfinished)) process.on('exit', killUnfinished);
    unfinished.add(link);
    this._running.add(link);
    void gone.then(() => {
      unfinished.delete(link);
      this._running.delete(link);
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      // The first answer proves the whole way works: the transport, the bridge, the host behind it.
      await Promise.race([
        client.call('host/info', {}),
        exited.then(() => Promise.reject(new Error('ended'))),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), CONNECT_TIMEOUT_MS))),
      ]);
    } catch (e) {
      // Ended on purpose (the client is done, or ends by a signal) while it connected: no failure to tell.
      if (ending) return never();
      if (this._disposed) {
        this._stop(link, true);
        throw new RemoteHostError(`host "${name}": the connection is being closed`, name);
      }
      // Why first: its stderr is read to the end before the process is let go.
      const silent = (e as Error).message === 'timeout';
      // Silent, its stderr may still say why (a banner, a password prompt it could not show).
      const said = silent ? stderr() : '';
      const printed = silent && stray !== undefined ? `; it printed what is not JSON-RPC: ${JSON.stringify(stray)}` : '';
      const why = silent ? `no answer within ${CONNECT_TIMEOUT_MS / 1000} s${printed}${said ? `; it said on stderr: ${said}` : ''}` : await ended();
      // A command that never answered (an ssh stuck in its handshake) is not waited for.
      this._stop(link, silent);
      const error = new RemoteHostError(`cannot reach host "${name}" with: ${command} (${why})`, name);
      if (silent) {
        const until = Date.now() + SILENT_RETRY_MS;
        this._silent.set(name, { error: new RemoteHostError(`${error.message}; tried again after ${new Date(until).toLocaleTimeString()}`, name), until });
      }
      throw error;
    } finally {
      clearTimeout(timer);
      child.stdout.off('data', lookForStray);
    }
    this._silent.delete(name);
    link.connected = true;
    const mine = this._links.get(name);
    client.onClose(() => {
      if (this._disposed || ending) return;
      if (this._links.get(name) === mine) this._links.delete(name);
      const line = ended().then((why) => {
        if (exitCode !== BRIDGE_HOST_GONE_STATUS) return `the connection to host "${name}" (${command}) dropped: ${why}; it is made again on the next use`;
        // The bridge said the host there is gone: its sessions ended with it; a new host starts at the next use.
        const gone = `host "${name}": ${bridgeLine(tail) ?? 'the Shared PTY host there is gone; its sessions ended with it'}`;
        this._goneLines.set(name, gone);
        return `${gone} (the next use starts a new host there)`;
      });
      this._drops.set(name, line);
      void line.then((m) => this._onDrop?.(m, name));
    });
    return link;
  }

  /**
   * Lets a bridge command go. The bridge ends when its stdin does; a command that ignores that (or,
   * `now`, one that never answered) is ended with what it started (`terminate`). The wait for it
   * keeps a CLI command alive until then: an unanswered `ssh` used to outlive the command that
   * started it.
   */
  private _stop(link: Link, now = false): void {
    if (link.stopping) {
      if (now) terminate(link);
      return;
    }
    link.stopping = true;
    link.client.close();
    if (link.child.exitCode === null && link.child.signalCode === null) {
      if (now) terminate(link);
      else {
        const t = setTimeout(() => terminate(link), EXIT_WAIT_MS);
        link.child.once('close', () => clearTimeout(t));
      }
    }
    link.child.unref();
    // Read on and dropped while the command ends: its cleanup may write there (bash's job report,
    // ssh's "Killed by signal 15"), which a pipe closed under it would end with SIGPIPE. Closed once
    // the command has exited, so what it started that still holds the pipe keeps nothing alive.
    const stderr = link.child.stderr;
    if (link.child.exitCode !== null || link.child.signalCode !== null) stderr.destroy();
    else {
      stderr.resume();
      link.child.once('exit', () => stderr.destroy());
    }
  }

  /**
   * Closes every bridge: one in use ends when its stdin closes (else it is ended, EXIT_WAIT_MS
   * later); one still connecting is ended at once, with what it started, so nothing of it outlives
   * the client that is done with it.
   */
  dispose(): void {
    this._disposed = true;
    for (const link of this._running) this._stop(link, !link.connected);
    this._links.clear();
  }
}

/** The shell that ran a bridge's command says 128+N when the command died of signal N: name it. */
function killedBy(code: number | null): string {
  const n = code === null ? 0 : code - 128;
  const name = Object.entries(os.constants.signals).find(([, v]) => v === n)?.[0];
  return name ? ` (ended by ${name})` : '';
}

/** What every use of a remote host's SessionInfo needs of it: an id and a name to find and show it by. */
export function isSessionLike(s: unknown): boolean {
  const o = s as { id?: unknown; name?: unknown } | null;
  return typeof o === 'object' && o !== null && typeof o.id === 'string' && o.id !== '' && typeof o.name === 'string';
}

/** What the bridge said last on stderr, without its `shared-pty bridge: ` opening. */
function bridgeLine(stderr: string): string | undefined {
  const said = 'shared-pty bridge: ';
  const last = stderr
    .split('\n')
    .reverse()
    .find((l) => l.startsWith(said));
  return last?.slice(said.length).trim();
}
