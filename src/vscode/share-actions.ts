import * as vscode from 'vscode';
import type { TokenScope } from '../core/io/caller';
import type { TokenInfo } from '../core/methods/types';
import type { HostRecord } from '../host/discovery';
import type { RpcClient } from '../transport/client/rpc-client';
import { externalLink } from './external-link';
import { mcpUrl } from './mcp-config';
import { EXPIRY_CHOICES, revokedNotice, sharedNotice, tokenNotice, tokenRow, whenText } from './share-links';

/** The session a share or revoke is about, and its host's control connection. */
export interface ShareTarget {
  name: string;
  sessionId: string;
  record: HostRecord;
  client: RpcClient;
}

/** The label of the notification's button that copies a reusable token (for an agent's config or a script). */
export const COPY_TOKEN = 'Copy Token';

interface ExpiryPick extends vscode.QuickPickItem {
  seconds: number;
}

interface TokenPick extends vscode.QuickPickItem {
  tokens: TokenInfo[];
}

/**
 * "Share Read-only Link…" / "Share with Input…": asks how long it should work, makes a token for
 * this session only (`session/share`), copies its browser link and says what it allows until when.
 */
export async function shareLink(t: ShareTarget, scope: TokenScope, title: string): Promise<void> {
  if (!t.record.http) {
    void vscode.window.showWarningMessage(`The host of ${t.name} serves no HTTP (sharedPty.http.enabled is off): a link would open nothing.`);
    return;
  }
  const now = new Date();
  const picks: ExpiryPick[] = EXPIRY_CHOICES.map((c) => ({
    label: c.label,
    description: `until ${whenText(new Date(now.getTime() + c.seconds * 1000).toISOString(), now)}`,
    seconds: c.seconds,
  }));
  const expiry = await vscode.window.showQuickPick(picks, {
    title: `${title}: ${t.name}`,
    placeHolder: 'How long the link works (you can revoke it sooner from the session list)',
  });
  if (!expiry) return;
  // A one-time link: the browser that opens it first trades it for a page cookie, and then it opens nothing.
  const r = await t.client.call('session/share', { session: t.sessionId, scope, expiresIn: expiry.seconds });
  // As this editor's browser reaches the host (through its port proxy, when it has one).
  await vscode.env.clipboard.writeText(await externalLink(r.url));
  const answer = await vscode.window.showInformationMessage(sharedNotice(t.name, r.info, new Date()), COPY_TOKEN);
  if (answer !== COPY_TOKEN) return;
  // A script or an agent needs a token that stays valid: a reusable one of its own, listed and revoked like the link.
  const reusable = await t.client.call('session/share', { session: t.sessionId, scope, expiresIn: expiry.seconds, reusable: true });
  await vscode.env.clipboard.writeText(reusable.token);
  const mcp = mcpUrl(t.record);
  void vscode.window.showInformationMessage(tokenNotice(t.name, reusable.info, mcp));
}

/** "Revoke Shared Links…": the session's live tokens (scope, expiry, last use); the picked ones end at once. */
export async function revokeLinks(t: ShareTarget): Promise<void> {
  const { tokens } = await t.client.call('host/tokens', {});
  const live = tokens.filter((x) => x.session === t.sessionId);
  if (live.length === 0) {
    void vscode.window.showInformationMessage(`${t.name} has no shared links that still work.`);
    return;
  }
  const now = new Date();
  const picks: TokenPick[] = live.map((x) => ({ ...tokenRow(x, now), tokens: [x] }));
  if (live.length > 1) picks.unshift({ label: `$(close-all) Revoke All ${live.length} Links`, tokens: live });
  const picked = await vscode.window.showQuickPick(picks, {
    title: `Revoke shared links: ${t.name}`,
    placeHolder: 'Pick the link to end now (whoever has it loses access at once)',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) return;
  const revoked: TokenInfo[] = [];
  for (const x of picked.tokens) {
    try {
      await t.client.call('host/revoke', { id: x.id });
      revoked.push(x);
    } catch {
      // Expired or revoked elsewhere meanwhile: it opens nothing either way.
    }
  }
  void vscode.window.showInformationMessage(revoked.length ? revokedNotice(t.name, revoked) : `Those links to ${t.name} had already ended.`);
}
