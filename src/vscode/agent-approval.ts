import * as vscode from 'vscode';
import { AgentNotification } from '../core/agent/approval';
import { agentApproval, type ApprovalRequest } from '../core/agent/approval-request';
import { paramsOf } from '../core/methods/notifications';
import { ApprovalQuestions } from './approval-questions';
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

/**
 * Makes this window one that answers agents' approval requests and shows "agent typing" on the
 * terminals agents write into: it watches every running host of the user (`host/watchAgents`)
 * as it appears in the discovery records, never starting one, and every remote host this window
 * has a bridge to (docs/editor.md#remote-hosts). A host with a window watching asks
 * before an agent types into a session the user opened (policy `ask`); the first answer wins.
 */
export function registerAgentApproval(context: vscode.ExtensionContext, deps: AgentApprovalDeps): void {
  const questions = new ApprovalQuestions(deps.log);
  context.subscriptions.push(questions);
  const watched = new Set<string>();
  /** The per-user hosts watched now: they follow this window's agent settings. */
  const daemons = new Map<string, RpcClient>();
  /**
   * Watches one host over `connect`'s connection: local hosts as their records appear, remote ones
   * (hosts.json) through their bridge once it is up, so a question of the far host reaches this window.
   */
  const watchHost = (key: string, hostId: string, setsPolicy: boolean, connect: () => Promise<RpcClient>, remote?: string) => {
    if (watched.has(key)) return;
    watched.add(key);
    void connect()
      .then(async (client) => {
        const sub = client.onNotification((n) => onNotification(hostId, client, n, questions, deps, remote));
        client.onClose(() => {
          sub.dispose();
          watched.delete(key);
          daemons.delete(key);
          deps.terminals.clearAgentTyping(hostId);
          questions.hostGone(hostId);
        });
        const r = await client.call('host/watchAgents', {});
        if (setsPolicy) {
          daemons.set(key, client);
          await applyPolicy(client, deps);
        }
        for (const id of r.typing) deps.terminals.setAgentTyping(hostId, id, true);
        for (const request of r.pending) questions.ask(hostId, client, onHost(request, remote));
      })
      .catch((e: Error) => {
        // An older host without the method, or one that just ended: look again on a later reading.
        deps.log.debug(`not watching agents of host ${hostId}: ${e.message}`);
        setTimeout(() => watched.delete(key), 30_000);
      });
  };
  const watch = (record: HostRecord) => watchHost(`${record.hostId}:${record.pid}`, record.hostId, record.kind === 'daemon', () => deps.hosts.client(record));
  const onSnapshot = (s: Snapshot) => s.hosts.forEach(watch);
  onSnapshot(deps.watcher.snapshot);
  context.subscriptions.push(
    deps.watcher.onDidPoll(onSnapshot),
    // A remote host's per-user host is the person's too: it follows this window's agent settings.
    deps.hosts.remotes.onDidConnect((c) => watchHost(`remote:${c.name}:${c.hostId}`, c.hostId, true, () => Promise.resolve(c.client), c.name)),
    // A changed setting applies at once to the per-user host (a host started by hand keeps its flags).
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('sharedPty.agent')) return;
      for (const client of daemons.values()) void applyPolicy(client, deps);
    }),
  );
}

/** Sets the per-user host's policy for agents' writes from this window's settings. */
async function applyPolicy(client: RpcClient, deps: AgentApprovalDeps): Promise<void> {
  // A setting the schema does not know (a typo in settings.json) is the editor's default, ask.
  const approval = agentApproval.safeParse(getSetting('agent.approval'));
  const params = { approval: approval.success ? approval.data : 'ask', denyCommands: getSetting('agent.denyCommands').filter(Boolean) };
  try {
    await client.call('host/agentPolicy', params);
  } catch (e) {
    // A deny rule that is not a regex: said once, and the host keeps the policy it had.
    void vscode.window.showErrorMessage(`Shared PTY: sharedPty.agent settings not applied: ${(e as Error).message}`);
    deps.log.warn(`host/agentPolicy: ${(e as Error).message}`);
  }
}

/** A remote host's request names its terminal as the person knows it there (`build:bash-1`). */
function onHost(request: ApprovalRequest, remote: string | undefined): ApprovalRequest {
  return remote ? { ...request, name: `${remote}:${request.name}` } : request;
}

function onNotification(hostId: string, client: RpcClient, n: Notification, questions: ApprovalQuestions, deps: AgentApprovalDeps, remote?: string): void {
  const typing = paramsOf(n, AgentNotification.Typing);
  if (typing) return deps.terminals.setAgentTyping(hostId, typing.session, typing.typing);
  // A watcher is sent the whole request (who asks, how, when); the short question is for an agent's own client.
  const request = paramsOf(n, AgentNotification.Approval);
  if (request && 'at' in request) return questions.ask(hostId, client, onHost(request, remote));
  const ended = paramsOf(n, AgentNotification.ApprovalEnded);
  if (ended) questions.ended(ended.id);
}
