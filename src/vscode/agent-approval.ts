import * as vscode from 'vscode';
import { AgentNotification, type ApprovalAnswer, type ApprovalRequest } from '../core/agent/approval';
import type { HostRecord } from '../host/discovery';
import type { Notification, RpcClient } from '../transport/client/rpc-client';
import type { HostClients } from './host-clients';
import type { SessionWatcher, Snapshot } from './session-watcher';
import type { TerminalManager } from './terminal-manager';
import { getSetting } from './settings';

export interface AgentApprovalDeps {
  hosts: HostClients;
  watcher: SessionWatcher;
  terminals: TerminalManager;
  log: vscode.LogOutputChannel;
}

/** The buttons of the question, and the answer each gives (CONTRACT §9.6). */
export const APPROVAL_CHOICES: readonly { label: string; answer: ApprovalAnswer }[] = [
  { label: 'Allow Once', answer: 'once' },
  { label: 'Allow for This Session', answer: 'session' },
  { label: 'Deny', answer: 'deny' },
];

/** Most characters of the agent's text the question shows (the rest is cut, and it says so). */
const SHOWN_CHARS = 300;

/**
 * Makes this window one that answers agents' approval requests and shows "agent typing" on the
 * terminals agents write into: it watches every running host of the user (`host/watchAgents`)
 * as it appears in the discovery records, never starting one. A host with a window watching asks
 * before an agent types into a session the user opened (policy `ask`); the first answer wins.
 */
export function registerAgentApproval(context: vscode.ExtensionContext, deps: AgentApprovalDeps): void {
  const watched = new Set<string>();
  /** The per-user hosts watched now: they follow this window's agent settings. */
  const daemons = new Map<string, RpcClient>();
  const watch = (record: HostRecord) => {
    const key = `${record.hostId}:${record.pid}`;
    if (watched.has(key)) return;
    watched.add(key);
    void deps.hosts
      .client(record)
      .then(async (client) => {
        const sub = client.onNotification((n) => onNotification(record, client, n, deps));
        client.onClose(() => {
          sub.dispose();
          watched.delete(key);
          daemons.delete(key);
          deps.terminals.clearAgentTyping(record.hostId);
        });
        const r = await client.request<{ pending: ApprovalRequest[]; typing: string[] }>('host/watchAgents', {});
        if (record.kind === 'daemon') {
          daemons.set(key, client);
          await applyPolicy(client, deps);
        }
        for (const id of r.typing) deps.terminals.setAgentTyping(record.hostId, id, true);
        for (const request of r.pending) void ask(record, client, request, deps);
      })
      .catch((e: Error) => {
        // An older host without the method, or one that just ended: look again on a later reading.
        deps.log.debug(`not watching agents of host ${record.hostId}: ${e.message}`);
        setTimeout(() => watched.delete(key), 30_000);
      });
  };
  const onSnapshot = (s: Snapshot) => s.hosts.forEach(watch);
  onSnapshot(deps.watcher.snapshot);
  context.subscriptions.push(
    deps.watcher.onDidPoll(onSnapshot),
    // A changed setting applies at once to the per-user host (a host started by hand keeps its flags).
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('sharedPty.agent')) return;
      for (const client of daemons.values()) void applyPolicy(client, deps);
    }),
  );
}

/** Sets the per-user host's policy for agents' writes from this window's settings. */
async function applyPolicy(client: RpcClient, deps: AgentApprovalDeps): Promise<void> {
  const approval = getSetting('agent.approval');
  const params = { approval: ['allow', 'ask', 'deny'].includes(approval) ? approval : 'ask', denyCommands: getSetting('agent.denyCommands').filter(Boolean) };
  try {
    await client.request('host/agentPolicy', params);
  } catch (e) {
    // A deny rule that is not a regex: said once, and the host keeps the policy it had.
    void vscode.window.showErrorMessage(`Shared PTY: sharedPty.agent settings not applied: ${(e as Error).message}`);
    deps.log.warn(`host/agentPolicy: ${(e as Error).message}`);
  }
}

function onNotification(record: HostRecord, client: RpcClient, n: Notification, deps: AgentApprovalDeps): void {
  if (n.method === AgentNotification.Typing) {
    deps.terminals.setAgentTyping(record.hostId, String(n.params.session), n.params.typing === true);
  } else if (n.method === AgentNotification.Approval) {
    void ask(record, client, n.params as unknown as ApprovalRequest, deps);
  }
}

/**
 * Asks the user about one request: the terminal it targets and the text the agent wants to type,
 * with Allow Once / Allow for This Session / Deny. Closing the question denies (the agent hears at
 * once instead of waiting out its timeout).
 */
async function ask(record: HostRecord, client: RpcClient, request: ApprovalRequest, deps: AgentApprovalDeps): Promise<void> {
  const via = request.transport === 'mcp-http' ? 'MCP over HTTP' : request.transport === 'mcp-stdio' ? 'MCP' : request.transport;
  const picked = await vscode.window.showWarningMessage(
    `An agent (${via}) wants to type into the terminal "${request.name}": ${readable(request.text)}`,
    ...APPROVAL_CHOICES.map((c) => c.label),
  );
  const answer = APPROVAL_CHOICES.find((c) => c.label === picked)?.answer ?? 'deny';
  deps.log.info(`agent write into ${request.name} (${request.session}): ${answer}${picked ? '' : ' (question closed)'}`);
  try {
    const r = await client.request<{ decided: boolean }>('host/approve', { id: request.id, decision: answer });
    if (!r.decided && picked) void vscode.window.showInformationMessage(`The agent's request to type into "${request.name}" was already over (answered elsewhere, or it timed out); nothing was typed for it.`);
  } catch (e) {
    if (picked) void vscode.window.showErrorMessage(`Could not answer the agent's request for "${request.name}": ${(e as Error).message}`);
  }
}

/** The agent's text as the user reads it: Enter as ⏎, other control characters as ^X, long text cut. */
export function readable(text: string): string {
  const shown = text.length > SHOWN_CHARS ? text.slice(0, SHOWN_CHARS) : text;
  const visible = shown.replace(/\r\n|\r|\n/g, '⏎').replace(/[\x00-\x1f\x7f]/g, (c) => (c === '\x7f' ? '^?' : `^${String.fromCharCode(c.charCodeAt(0) + 64)}`));
  return `"${visible}"${text.length > SHOWN_CHARS ? ` (and ${text.length - SHOWN_CHARS} more characters)` : ''}`;
}
