import * as path from 'node:path';
import { readLiveRecords, type HostRecord } from '../host/discovery';
import { ErrorCode } from '../core/base/errors';
import { MAX_TOKEN_SECONDS } from '../core/base/limits';
import type { TokenInfo } from '../core/methods/types';
import { RpcCallError, RpcClient } from '../transport/client/rpc-client';
import { parseArgs, strFlag, UsageError } from './args';
import { COMMAND_FLAGS } from './command-flags';
import { CliError, findSession } from './find-session';

const SHARE_USAGE = 'shared-pty share <session> [--scope view|input|control] [--expires 1h] [--reusable] [--json]';
const SCOPES = ['view', 'input', 'control'] as const;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `--expires 90s | 15m | 1h | 2d` in seconds (a bare number is seconds). */
export function parseDuration(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  const seconds = m ? Number(m[1]) * UNIT_SECONDS[m[2] || 's'] : NaN;
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > MAX_TOKEN_SECONDS) {
    throw new UsageError(`--expires needs a duration from 1s to 30d (like 90s, 15m, 1h, 2d), got "${text}"`);
  }
  return seconds;
}

/** What a link's line says about it: what it allows, until when, and how to end it. */
export function linkNote(info: TokenInfo): string {
  const what = info.session === null ? `replay of ${info.recording ?? 'a recording'}` : `${info.scope} access to session ${info.session}`;
  const use = info.reusable
    ? 'a reusable token: scripts and agents send it as "Authorization: Bearer <token>" until it expires'
    : info.session === null
      ? 'the link opens once, in the first browser that opens it; after that it opens nothing'
      : 'the link opens once, in the first browser that opens it, and until then its token also works for scripts and agents ("Authorization: Bearer <token>"); after that neither opens anything';
  return `${what} until ${info.expiresAt}: ${use} (token id ${info.id}; end it with: shared-pty revoke ${info.id})`;
}

/**
 * `share <session> [--scope view|input|control] [--expires 1h] [--reusable]`: a link for that
 * session only, and its token (docs/protocol.md, Scoped tokens). By default a one-time link whose
 * token works for scripts and agents until the link is opened, so that whoever reads it later (it
 * is often printed into a shared terminal) gains nothing; `--reusable`: a token that scripts and
 * agents use until it expires. The host keeps its hash only.
 */
export async function shareCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.share);
  const selector = args.positional[0];
  if (!selector) throw new UsageError(`missing <session>; usage: ${SHARE_USAGE}`);
  const scope = strFlag(args, '--scope') ?? 'view';
  if (!(SCOPES as readonly string[]).includes(scope)) throw new UsageError(`--scope must be view, input or control, got "${scope}"`);
  const expires = strFlag(args, '--expires');
  // Every flag is checked before the host is looked for: a bad flag is the first thing to fix.
  const expiresIn = expires === undefined ? undefined : parseDuration(expires);
  const reusable = args.flags.has('--reusable');
  const found = findSession(selector, 'share');
  if (!found.host.http) throw new CliError(`host ${found.host.hostId} serves no HTTP (started with --no-http): a token would open nothing`);
  const r = await onHost(found.host, (c) =>
    c.call('session/share', { session: found.session.id, scope: scope as (typeof SCOPES)[number], expiresIn, reusable }),
  );
  if (args.flags.has('--json')) {
    process.stdout.write(JSON.stringify(r) + '\n');
    return 0;
  }
  // The token for scripts and agents (the one in the link): a link's works until its page was opened.
  process.stdout.write(`link:  ${r.url}\ntoken: ${r.token}\n${linkNote(r.info)}\n`);
  return 0;
}

/** `tokens [--json]`: the scoped tokens of every live host (never a token or its hash). */
export async function tokensCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.tokens);
  const all: Array<TokenInfo & { hostId: string }> = [];
  for (const host of readLiveRecords().filter((h) => h.http)) {
    const r = await onHost(host, (c) => c.call('host/tokens', {}));
    all.push(...r.tokens.map((t) => ({ ...t, hostId: host.hostId })));
  }
  if (args.flags.has('--json')) {
    process.stdout.write(JSON.stringify(all, null, 2) + '\n');
    return 0;
  }
  if (all.length === 0) return 0;
  const header = ['ID', 'SCOPE', 'SESSION', 'KIND', 'EXPIRES', 'LAST USE'];
  const kind = (t: TokenInfo) => (t.agent ? 'agent' : t.reusable ? 'reusable' : t.openedAt ? 'link, opened' : 'link, not opened');
  const reach = (t: TokenInfo) => t.session ?? (t.agent ? 'every session' : `replay ${path.basename(t.recording ?? '')}`);
  const rows = all.map((t) => [t.id, t.scope, reach(t), kind(t), t.expiresAt, t.lastUsedAt ?? 'never']);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows]) process.stdout.write(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ') + '\n');
  return 0;
}

/** `revoke <id>`: ends the token at once, on whichever host issued it; its open WebSockets close. */
export async function revokeCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.revoke);
  const id = args.positional[0];
  if (!id) throw new UsageError('missing <id>; usage: shared-pty revoke <id> (see shared-pty tokens)');
  const live = readLiveRecords();
  // No host, no token: the id may be right, but nothing holds it (tokens end with their host).
  if (live.length === 0) throw new CliError('no Shared PTY host is running, so no shared token is valid (tokens end with their host)');
  for (const host of live.filter((h) => h.http)) {
    try {
      await onHost(host, (c) => c.call('host/revoke', { id }));
      process.stdout.write(`revoked ${id}\n`);
      return 0;
    } catch (e) {
      if (!(e instanceof HostCallError && e.code === ErrorCode.ServerError)) throw e;
    }
  }
  throw new CliError(`unknown token: ${id} (see shared-pty tokens)`);
}

/** A CLI error that keeps the host's error code (so revoke can tell "not mine" from a failure). */
class HostCallError extends CliError {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** Runs calls on one host's control socket; RPC errors become CLI errors. */
export async function onHost<T>(host: HostRecord, fn: (client: RpcClient) => Promise<T>): Promise<T> {
  let client: RpcClient;
  try {
    client = await RpcClient.connect(host.control);
  } catch (e) {
    throw new CliError(`cannot reach host ${host.hostId}: ${(e as Error).message}`);
  }
  try {
    return await fn(client);
  } catch (e) {
    if (e instanceof RpcCallError) throw new HostCallError(e.message, e.code);
    throw e;
  } finally {
    client.close();
  }
}
