import { readLiveRecords, type HostRecord } from '../host/discovery';
import type { HostEvent } from '../core/session/session-events';
import { paramsOf } from '../core/methods/notifications';
import { RpcClient, type Notification } from '../transport/client/rpc-client';
import { intFlag, parseArgs, UsageError } from './args';
import { COMMAND_FLAGS } from './command-flags';
import { CliError, findSession, hostGoneMessage } from './find-session';

export const EVENTS_USAGE = 'shared-pty events [<session>] [--since SEQ] [--json]';

/**
 * `events [<session>] [--since SEQ] [--json]`: prints the events of a session (docs/protocol.md#events-ptyevents-and-ptywaitevent), or
 * of every session of every running host, one line each as they happen, until interrupted or
 * until the hosts end. `--since` replays the retained events after that seq first (seqs count per
 * host, so it needs a session); `--json` prints each event as one JSON object (with its `host`).
 */
export async function eventsCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.events);
  const selector = args.positional[0];
  if (args.positional.length > 1) throw new UsageError(`too many arguments; usage: ${EVENTS_USAGE}`);
  const since = intFlag(args, '--since');
  if (since !== undefined && selector === undefined)
    throw new UsageError(`--since needs a <session> (each host numbers its own events); usage: ${EVENTS_USAGE}`);
  const json = args.flags.has('--json');

  const found = selector === undefined ? undefined : findSession(selector, 'events');
  const hosts = found ? [found.host] : readLiveRecords();
  if (hosts.length === 0) throw new CliError('no Shared PTY host is running (start one with: shared-pty serve)');
  const names = new Map(hosts.flatMap((h) => h.sessions.map((s) => [s.id, s.name] as const)));

  // Ctrl+C ends it with 0 from the first event on: listened for before anything is printed.
  let interrupted: () => void = () => undefined;
  const interrupt = new Promise<void>((resolve) => (interrupted = resolve));
  process.once('SIGINT', () => interrupted());
  process.once('SIGTERM', () => interrupted());
  const clients = await Promise.all(hosts.map((h) => follow(h, found?.session.id, since, (e) => print(h, e))));
  let stopping = false;
  await new Promise<void>((resolve) => {
    void interrupt.then(resolve);
    let open = clients.length;
    clients.forEach((c, i) =>
      c.onClose(() => {
        // A host that ends (stopped, killed) says so in one line; the others are still followed.
        if (stopping) return void (--open === 0 && resolve());
        void hostGoneMessage(hosts[i]).then((message) => {
          if (!stopping) process.stderr.write(`shared-pty: ${message}\n`);
          if (--open === 0) resolve();
        });
      }),
    );
  });
  stopping = true;
  for (const c of clients) c.close();
  return 0;

  function print(host: HostRecord, e: HostEvent): void {
    if (json) return void process.stdout.write(JSON.stringify({ host: host.hostId, ...e }) + '\n');
    if (!names.has(e.session)) for (const s of readLiveRecords().flatMap((h) => h.sessions)) names.set(s.id, s.name);
    const time = e.at.slice(11, 19);
    process.stdout.write(`${e.seq}\t${time}\t${names.get(e.session) ?? e.session}\t${describe(e)}\n`);
  }
}

/** Subscribes to a host's events (of one session, or all of them). */
async function follow(host: HostRecord, session: string | undefined, since: number | undefined, onEvent: (e: HostEvent) => void): Promise<RpcClient> {
  let client: RpcClient;
  try {
    client = await RpcClient.connect(host.control);
  } catch (e) {
    throw new CliError(`cannot reach host ${host.hostId}: ${(e as Error).message}`);
  }
  client.onNotification((n: Notification) => {
    const event = paramsOf(n, 'pty/event');
    if (event) onEvent(event);
  });
  await client.call('pty/events', { ...(session ? { session } : {}), ...(since !== undefined ? { since } : {}) });
  return client;
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
