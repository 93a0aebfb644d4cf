import { olderHostMessage } from './remote-session-info';
import { HostsConfigError, hostsConfigPath, LOCAL_HOST, readHostsConfig, splitHostSelector, unknownHostError, type HostsConfig } from '../host/hosts-config';
import { RemoteHosts } from '../host/remote-hosts';
import type { SessionInfo } from '../core/methods/types';
import { resolveSelector } from '../core/session/selector';
import { ErrorCode } from '../core/base/errors';
import { ConnectionClosedError, RpcCallError, RpcClient } from '../transport/client/rpc-client';
import { CliError, connectHost, findLocalSession, hostGoneMessage, type FoundSession } from './find-session';
import { describedFully } from './remote-session-info';

/** `--host NAME` as given on this command line (it wins over SHARED_PTY_HOST). */
let hostFlag: string | undefined;

/** Takes `--host NAME` (or `--host=NAME`) out of a command's arguments, before any `--`. */
export function takeHostFlag(argv: string[]): string[] {
  const out: string[] = [];
  let given = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') return [...out, ...argv.slice(i)];
    if (a === '--host' || a.startsWith('--host=')) {
      const v = a === '--host' ? argv[++i] : a.slice('--host='.length);
      if (!v) throw new CliError('--host needs a host name (see hosts.json in docs/hosts.md#remote-hosts)', 2);
      // `--host --json` lost its name, as any flag's value followed by a flag (args.ts).
      if (a === '--host' && v.startsWith('--')) throw new CliError(`--host needs a host name before ${v}`, 2);
      // As every other flag: given twice is a mistake, never one of the two silently dropped.
      if (given) throw new CliError('--host is given twice; give it once', 2);
      given = true;
      hostFlag = v;
      continue;
    }
    out.push(a);
  }
  return out;
}

/** The host a command acts on when its selector names none: `--host`, else SHARED_PTY_HOST, else this machine. */
export function chosenHost(): string | undefined {
  return hostFlag ?? (process.env.SHARED_PTY_HOST || undefined);
}

let config: HostsConfig | undefined;
let remotes: RemoteHosts | undefined;

/** hosts.json, read once per command; a broken one is a one-line error. */
export function hostsConfig(): HostsConfig {
  try {
    return (config ??= readHostsConfig());
  } catch (e) {
    if (e instanceof HostsConfigError) throw new CliError(e.message);
    throw e;
  }
}

/**
 * hosts.json where only this machine's sessions are asked for: a broken file names no remote host
 * and `broken` hears why (once), so local work goes on (`list` says it and exits 1). A selector or
 * `--host` that names a host still meets the error (hostsConfig).
 */
export function hostsConfigForLocal(broken: (message: string) => void = () => undefined): HostsConfig {
  try {
    return hostsConfig();
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    broken(e.message);
    return { file: hostsConfigPath(), hosts: new Map(), broken: e.message };
  }
}

/** This process's bridges: one per remote host, however many calls use it. */
export function remoteHosts(): RemoteHosts {
  return (remotes ??= new RemoteHosts(hostsConfig()));
}

/** Ends this process's bridges (each ends as its stdin closes), so the CLI can exit. */
export function closeRemoteHosts(): void {
  remotes?.dispose();
  remotes = undefined;
}

/** The remote host `name` or, for `local` or none, undefined; an unknown name is an error. */
export function remoteName(name: string | undefined): string | undefined {
  if (name === undefined || name === LOCAL_HOST) return undefined;
  if (!hostsConfig().hosts.has(name)) throw new CliError(unknownHostError(hostsConfig(), name).message);
  return name;
}

/** A session found on this machine or on a remote host, and how to reach its host. */
export interface SessionTarget {
  session: SessionInfo;
  /** The remote host's name; undefined on this machine. */
  remote: string | undefined;
  /** How the user names it: `build:abc123` on a remote host, its id here. */
  label: string;
  /** A client to its host: a new connection here, the shared bridge for a remote host. */
  connect(): Promise<RpcClient>;
  /** Lets go of a client from connect() (the shared bridge stays open). */
  release(client: RpcClient): void;
  /** What to tell the user when the connection closed under a call (`closed`: the error it failed with). */
  goneMessage(closed?: unknown): Promise<string>;
  /** The host's refusal of a call, as a CLI error: a remote one names the host, none names a JSON-RPC method. */
  refused(e: RpcCallError): CliError;
  /** The local host's record (this machine only). */
  local?: FoundSession['host'];
}

/** A session by selector: `NAME:SELECTOR` on a remote host, else on `--host`/SHARED_PTY_HOST's, else here. */
export async function findTarget(selector: string): Promise<SessionTarget> {
  // Only a selector with a `:` may name a host: another finds this machine's session whatever hosts.json holds.
  const config = selector.includes(':') && !selector.startsWith(`${LOCAL_HOST}:`) ? hostsConfig() : hostsConfigForLocal();
  const split = splitHostSelector(config, selector);
  const remote = remoteName(split.host ?? chosenHost());
  if (remote === undefined) return localTarget(findLocalSession(split.selector, config));
  const sessions = await remoteSessions(remote);
  const r = resolveSelector(
    sessions,
    split.selector,
    (s) => s.id,
    (s) => s.name,
  );
  if (r.kind === 'ambiguous') throw new CliError(`session "${selector}" is ambiguous on host "${remote}"; use its id`);
  if (r.kind === 'unknown') throw new CliError(`unknown session on host "${remote}": ${split.selector}`);
  return remoteTarget(remote, r.item);
}

/**
 * `remote`'s sessions, as every command that names one of them finds it: within the listing's
 * time, checked to be a list of sessions, a failure a one-line CLI error naming the host.
 */
export async function remoteSessions(remote: string): Promise<SessionInfo[]> {
  try {
    return (await remoteHosts().listSessions<SessionInfo>(remote, (c) => c.call('session/list', {}))).map(describedFully);
  } catch (e) {
    if (e instanceof ConnectionClosedError) throw new CliError(await remoteHosts().dropMessage(remote));
    if (e instanceof RpcCallError) throw remoteRefusal(remote, e);
    throw new CliError((e as Error).message);
  }
}

/**
 * A remote host's refusal of a call, as one CLI line: a method the host does not know (an older
 * version there) is said with the host's name and no JSON-RPC method (docs/cli.md#errors); params
 * it rejects are the user's usage error (2).
 */
export function remoteRefusal(remote: string, e: RpcCallError): CliError {
  if (e.code === ErrorCode.MethodNotFound) return new CliError(olderHostMessage(remote));
  return new CliError(e.message, e.code === ErrorCode.InvalidParams ? 2 : 1);
}

/** This machine's host's refusal of a call, as a CLI error: params it rejects are the user's usage error (2). */
function localRefusal(e: RpcCallError): CliError {
  return new CliError(e.message, e.code === ErrorCode.InvalidParams ? 2 : 1);
}

/** The bridge of `remote`, its failure as a one-line CLI error. */
export async function connectRemote(remote: string): Promise<RpcClient> {
  try {
    return await remoteHosts().connect(remote);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

export function remoteTarget(remote: string, session: SessionInfo): SessionTarget {
  return {
    session: { ...session, host: remote },
    remote,
    label: `${remote}:${session.id}`,
    connect: () => connectRemote(remote),
    release: () => undefined,
    goneMessage: () => remoteHosts().dropMessage(remote),
    refused: (e) => remoteRefusal(remote, e),
  };
}

/** A session of this machine as a target. */
export function localTarget(found: FoundSession): SessionTarget {
  return {
    session: found.session,
    remote: undefined,
    label: found.session.id,
    connect: () => connectHost(found),
    release: (client) => client.close(),
    goneMessage: (closed) => hostGoneMessage(found.host, closed),
    refused: localRefusal,
    local: found.host,
  };
}
