import { readLiveRecords, type HostRecord } from '../host/discovery';
import type { HostEvent } from '../core/session/events/session-events';
import { paramsOf } from '../core/methods/notifications';
import { RpcCallError, RpcClient, type Notification } from '../transport/client/rpc-client';
import { intFlag, parseArgs, UsageError } from './args';
import { COMMAND_FLAGS } from './command-flags';
import { CliError, hostGoneMessage } from './find-session';
import { chosenHost, connectRemote, findTarget, remoteHosts, remoteName, remoteRefusal, remoteSessions } from './remote';
import { stdoutClosed, whenStdoutCloses } from './stdout-closed';
import { answerWithin, stalledMessage } from './answer-bound';

export const EVENTS_USAGE = 'shared-pty events [<session>] [--since SEQ] [--json] [--host NAME]';

/** A host whose events are followed: how its events name it (`--json`'s `host`), and its sessions' names. */
interface Followed {
  host: string;
  /** Before a session's name in a line: `NAME:` for a remote host, as its sessions are selected; none for this machine's. */
  prefix: string;
  client: RpcClient;
  names: Map<string, string>;
  /** What to say when its connection ends. */
  gone(): Promise<string>;
  /** Fills in the names of sessions opened since (a local host's record has them; a remote host is asked). */
  refreshNames(): Promise<void>;
  /** Its lines, in the order its events came: one that names a session not known yet waits for the names. */
  lines: Promise<void>;
}

/**
 * `events [<session>] [--since SEQ] [--json]`: prints the events of a session (docs/protocol.md#events-ptyevents-and-ptywaitevent), or
 * of every session of every running host of this machine (of the remote host `--host` names),
 * one line each as they happen, until interrupted, until stdout's reader goes, or until the hosts
 * end. A remote session (`build:bash-1`, `--host`) is followed through its bridge. `--since`
 * replays the retained events after that seq first (seqs count per host, so it needs a session);
 * `--json` prints each event as one JSON object (with its `host`).
 */
export async function eventsCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.events);
  const selector = args.positional[0];
  if (args.positional.length > 1) throw new UsageError(`too many arguments; usage: ${EVENTS_USAGE}`);
  const since = intFlag(args, '--since');
  if (since !== undefined && selector === undefined)
    throw new UsageError(`--since needs a <session> (each host numbers its own events); usage: ${EVENTS_USAGE}`);
  const json = args.flags.has('--json');

  const target = selector === undefined ? undefined : await findTarget(selector);
  const remote = target ? target.remote : remoteName(chosenHost());

  // Ctrl+C ends it with 0 from the first event on: listened for before anything is printed; so
  // does a reader of stdout that has gone (`| head`). Before it follows anything (a host or a link
  // that takes its time), the process just ends: nothing of it needs closing.
  let interrupted: () => void = () => undefined;
  const interrupt = new Promise<void>((resolve) => (interrupted = resolve));
  let following = false;
  const onSignal = () => (following ? interrupted() : process.exit(0));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  void whenStdoutCloses().then(() => interrupted());
  const reached = remote !== undefined ? [await followRemote(remote)] : await followLocal(target?.local);
  const stalled = await Promise.all(reached.map((f) => subscribeWithin(f, target?.session.id, since, (e) => print(f, e))));
  const followed = reached.filter((_, i) => stalled[i] === undefined);
  const said = stalled.filter((m) => m !== undefined);
  // A host that gave no answer is said, and the others are followed; with none left, that is the error.
  if (followed.length === 0) throw new CliError(said.join('; '));
  for (const line of said) process.stderr.write(`shared-pty: ${line}\n`);
  following = true;
  let stopping = false;
  // A host that went away is a failure told in one line (exit 1); Ctrl+C or a closed reader is not.
  let lost = false;
  await new Promise<void>((resolve) => {
    void interrupt.then(resolve);
    let open = followed.length;
    followed.forEach((f) =>
      f.client.onClose(() => {
        // A host that ends (stopped, killed) says so in one line; the others are still followed.
        if (stopping) return void (--open === 0 && resolve());
        void f.gone().then((message) => {
          if (!stopping) {
            lost = true;
            process.stderr.write(`shared-pty: ${message}\n`);
          }
          if (--open === 0) resolve();
        });
      }),
    );
  });
  stopping = true;
  for (const f of followed) f.client.close();
  return lost ? 1 : 0;

  function print(f: Followed, e: HostEvent): void {
    if (stdoutClosed()) return;
    if (json) return void process.stdout.write(JSON.stringify({ host: f.host, ...e }) + '\n');
    const line = () => {
      if (stdoutClosed()) return;
      const time = e.at.slice(11, 19);
      process.stdout.write(`${e.seq}\t${time}\t${f.prefix}${f.names.get(e.session) ?? e.session}\t${describe(e)}\n`);
    };
    f.lines = f.lines.then(async () => {
      if (!f.names.has(e.session)) await f.refreshNames();
      line();
    });
  }
}

/** This machine's hosts (or the one of `only`), each on a connection of its own. */
async function followLocal(only: HostRecord | undefined): Promise<Followed[]> {
  const hosts = only ? [only] : readLiveRecords();
  if (hosts.length === 0) throw new CliError('no Shared PTY host is running (start one with: shared-pty open, or shared-pty serve)');
  const names = new Map(hosts.flatMap((h) => h.sessions.map((s) => [s.id, s.name] as const)));
  const refreshNames = async () => {
    for (const s of readLiveRecords().flatMap((h) => h.sessions)) names.set(s.id, s.name);
  };
  const reached = await Promise.allSettled(hosts.map((h) => RpcClient.connect(h.control)));
  const followed: Followed[] = [];
  const unreached: string[] = [];
  reached.forEach((r, i) => {
    const h = hosts[i];
    if (r.status === 'fulfilled')
      followed.push({ host: h.hostId, prefix: '', client: r.value, names, gone: () => hostGoneMessage(h), refreshNames, lines: Promise.resolve() });
    else unreached.push(`cannot reach host ${h.hostId}: ${(r.reason as Error).message}`);
  });
  if (followed.length === 0) throw new CliError(unreached.join('; '));
  // One that cannot be reached (a stale record) is said, and the others are followed.
  for (const line of unreached) process.stderr.write(`shared-pty: ${line}\n`);
  return followed;
}

/** The remote host `name`, through its bridge (docs/hosts.md#remote-hosts). */
async function followRemote(name: string): Promise<Followed> {
  const client = await connectRemote(name);
  const names = new Map<string, string>();
  const list = async () => {
    for (const s of await remoteSessions(name)) names.set(s.id, s.name);
  };
  await list();
  return {
    host: name,
    prefix: `${name}:`,
    client,
    names,
    gone: () => remoteHosts().dropMessage(name),
    refreshNames: () => list().catch(() => undefined),
    lines: Promise.resolve(),
  };
}

/**
 * Subscribes to a host's events, within ANSWER_MARGIN_MS past an answer's due: a host that does not
 * answer (stopped, or a link to it that stalled) is not followed, and the line that says so is returned.
 */
async function subscribeWithin(
  f: Followed,
  session: string | undefined,
  since: number | undefined,
  onEvent: (e: HostEvent) => void,
): Promise<string | undefined> {
  const who = f.prefix === '' ? `the Shared PTY host ${f.host}` : `host "${f.host}"`;
  try {
    await answerWithin('pty/events', {}, subscribe(f, session, since, onEvent), (ms, own) => new CliError(stalledMessage(who, ms, own)));
    return undefined;
  } catch (e) {
    // A remote host that does not know the call (an older version there) is named, as other commands name it.
    if (e instanceof RpcCallError && f.prefix !== '') throw remoteRefusal(f.host, e);
    if (!(e instanceof CliError)) throw e;
    f.client.close();
    return e.message;
  }
}

/** Subscribes to a host's events (of one session, or all of them). */
async function subscribe(f: Followed, session: string | undefined, since: number | undefined, onEvent: (e: HostEvent) => void): Promise<void> {
  f.client.onNotification((n: Notification) => {
    const event = paramsOf(n, 'pty/event');
    if (event) onEvent(event);
  });
  await f.client.call('pty/events', { ...(session ? { session } : {}), ...(since !== undefined ? { since } : {}) });
}

/** An event as a person reads it. */
function describe(e: HostEvent): string {
  switch (e.type) {
    case 'command_started':
      return `command_started ${JSON.stringify(e.command)}`;
    case 'command_finished':
      return `command_finished ${JSON.stringify(e.command)} exit ${e.exitCode ?? '?'} (${e.durationMs} ms)`;
    case 'title':
      return `title ${JSON.stringify(e.title)}`;
    case 'resize':
      return `resize ${e.cols}x${e.rows}`;
    case 'exit':
      return `exit ${e.exitCode}${e.signal ? ` (${e.signal})` : ''}`;
    default:
      return e.type;
  }
}
