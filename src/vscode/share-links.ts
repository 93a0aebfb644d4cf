import type { TokenScope } from '../core/io/caller';
import type { TokenInfo } from '../core/methods/types';

// What the session list says about shared links (docs/editor.md#sharing-and-recording): plain text, no vscode import, so
// the wording and the expiry choices are unit-tested in Node.

/** One entry of the expiry pick: what the user reads and `session/share`'s `expiresIn`. */
export interface ExpiryChoice {
  readonly label: string;
  readonly seconds: number;
}

/**
 * The expiries the session list offers, the default first: an hour covers a pairing session or a
 * demo; a week is the longest a link to a live terminal should usually live (the host allows 30 days).
 */
export const EXPIRY_CHOICES: readonly ExpiryChoice[] = [
  { label: '1 hour', seconds: 3600 },
  { label: '15 minutes', seconds: 15 * 60 },
  { label: '8 hours', seconds: 8 * 3600 },
  { label: '1 day', seconds: 86400 },
  { label: '1 week', seconds: 7 * 86400 },
];

/** What a link of each scope lets whoever has it do, as a sentence ends. */
const ALLOWS: Record<TokenScope, string> = {
  view: 'watch it, not type',
  input: 'watch it and type into it',
  control: 'watch it, type, send signals and close it',
};

/** A token's kind, as the revoke list names it. */
const KIND: Record<TokenScope, string> = {
  view: 'Read-only link',
  input: 'Link with input',
  control: 'Link with control',
};

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "today at 19:24", "tomorrow at 09:05", "Fri 11 Dec at 19:24": local time, as a person reads it. */
export function whenText(iso: string, now: Date): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  const clock = `${pad(t.getHours())}:${pad(t.getMinutes())}`;
  const days = dayNumber(t) - dayNumber(now);
  if (days === 0) return `today at ${clock}`;
  if (days === 1) return `tomorrow at ${clock}`;
  if (days === -1) return `yesterday at ${clock}`;
  return `${WEEKDAYS[t.getDay()]} ${t.getDate()} ${MONTHS[t.getMonth()]}${t.getFullYear() === now.getFullYear() ? '' : ` ${t.getFullYear()}`} at ${clock}`;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago". */
export function agoText(iso: string, now: Date): string {
  const s = Math.max(0, Math.floor((now.getTime() - new Date(iso).getTime()) / 1000));
  if (Number.isNaN(s)) return iso;
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  const d = Math.floor(s / 86400);
  return `${d} day${d === 1 ? '' : 's'} ago`;
}

/** The notification after a link was copied: what it allows, until when, and that it opens once. */
export function sharedNotice(sessionName: string, info: TokenInfo, now: Date): string {
  const what = info.scope === 'view' ? `a read-only link to ${sessionName}` : `a link to ${sessionName} with ${info.scope}`;
  return (
    `Copied ${what}, until ${whenText(info.expiresAt, now)}: whoever opens it first can ${ALLOWS[info.scope]}, in that browser; ` +
    'then the link itself opens nothing. Revoke it from the session list.'
  );
}

/** The notification after a reusable token was copied for a script or an agent. */
export function tokenNotice(sessionName: string, info: TokenInfo, mcpUrl: string | undefined): string {
  return (
    `Copied a token for scripts and agents (${info.scope}, ${sessionName} only, token ${info.id}): send it as "Authorization: Bearer <token>" ` +
    `to REST, /rpc or ${mcpUrl ?? '/mcp'}. It works until it expires, for whoever has it; revoke it from the session list.`
  );
}

/** A live token as the revoke list shows it. */
export function tokenRow(info: TokenInfo, now: Date): { label: string; description: string; detail: string } {
  const opened = info.reusable ? '' : info.openedAt ? ` · opened ${agoText(info.openedAt, now)}` : ' · not opened yet';
  return {
    label: kindOf(info),
    description: `until ${whenText(info.expiresAt, now)} · ${info.lastUsedAt ? `last used ${agoText(info.lastUsedAt, now)}` : 'never used'}${opened}`,
    detail: `can ${ALLOWS[info.scope]} · token ${info.id}, made ${whenText(info.createdAt, now)}`,
  };
}

/** The notification after revoking. */
export function revokedNotice(sessionName: string, infos: readonly TokenInfo[]): string {
  if (infos.length === 1)
    return `Revoked the ${kindOf(infos[0]).toLowerCase()} to ${sessionName} (token ${infos[0].id}): it opens nothing now, and pages open with it were closed.`;
  return `Revoked ${infos.length} shared links to ${sessionName}: they open nothing now, and pages open with them were closed.`;
}

/** What a token is, as the revoke list names it: a link of a scope, or a reusable token for scripts. */
function kindOf(info: TokenInfo): string {
  return info.reusable ? `Token for scripts (${info.scope})` : KIND[info.scope];
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** Days since the epoch in local time, so "today" follows the user's calendar. */
function dayNumber(d: Date): number {
  return Math.round(new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime() / 86_400_000);
}
