import * as vscode from 'vscode';
import type { ApprovalAnswer, ApprovalRequest } from '../core/agent/approval-request';
import type { RpcClient } from '../transport/client/rpc-client';

/** The buttons of the question, and the answer each gives (docs/editor.md#approvals). */
export const APPROVAL_CHOICES: readonly { label: string; answer: ApprovalAnswer }[] = [
  { label: 'Allow Once', answer: 'once' },
  { label: 'Allow for This Session', answer: 'session' },
  { label: 'Deny', answer: 'deny' },
];

/** The command behind the status bar reminder: pick a waiting question and answer it. */
export const ANSWER_AGENT_COMMAND = 'sharedPty.answerAgent';

/** Most characters of the agent's text the question shows (the rest is cut, and it says so). */
const SHOWN_CHARS = 300;

/**
 * The button of a question whose text was cut: the whole text, in a dialog that answers. A cut
 * question offers no Allow: an agent could pad a harmless start to hide what follows.
 */
const SHOW_ALL = 'Show All…';

interface Question {
  request: ApprovalRequest;
  hostId: string;
  client: RpcClient;
}

/**
 * The agents' questions this window shows: each as a notification, and, while any waits, a status
 * bar item that stays (a notification slides into the notification centre after a few seconds,
 * and the agent would wait out its timeout unseen). Either place answers; the first answer wins.
 */
export class ApprovalQuestions implements vscode.Disposable {
  private readonly _waiting = new Map<string, Question>();
  private readonly _item = vscode.window.createStatusBarItem('sharedPty.agentQuestion', vscode.StatusBarAlignment.Left, 99);
  private readonly _command: vscode.Disposable;

  constructor(private readonly _log: vscode.LogOutputChannel) {
    this._item.name = 'Shared PTY: an agent asks to type';
    this._item.command = ANSWER_AGENT_COMMAND;
    this._item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this._command = vscode.commands.registerCommand(ANSWER_AGENT_COMMAND, () => this._pickAndAnswer());
  }

  /** A new request from a host: asked at once, and remembered until it is answered or over. */
  ask(hostId: string, client: RpcClient, request: ApprovalRequest): void {
    if (this._waiting.has(request.id)) return;
    this._waiting.set(request.id, { request, hostId, client });
    this._render();
    void this._notify(request.id);
  }

  /** The request is over (answered elsewhere, timed out, its caller gone). */
  ended(id: string): void {
    if (this._waiting.delete(id)) this._render();
  }

  /** A host's connection closed: its questions cannot be answered any more. */
  hostGone(hostId: string): void {
    for (const [id, q] of this._waiting) if (q.hostId === hostId) this._waiting.delete(id);
    this._render();
  }

  dispose(): void {
    this._item.dispose();
    this._command.dispose();
  }

  private async _notify(id: string): Promise<void> {
    const q = this._waiting.get(id);
    if (!q) return;
    const cut = q.request.text.length > SHOWN_CHARS;
    const labels = cut ? [SHOW_ALL, 'Deny'] : APPROVAL_CHOICES.map((c) => c.label);
    const picked = await vscode.window.showWarningMessage(questionText(q.request), ...labels);
    if (picked === SHOW_ALL) return this._askWhole(id);
    // Closing the question denies: the agent hears at once instead of waiting out its timeout.
    // A notification answered after the status bar (or another window) did changes nothing.
    await this._answer(id, APPROVAL_CHOICES.find((c) => c.label === picked)?.answer ?? 'deny', picked !== undefined);
  }

  /** The question with the agent's whole text, in a dialog (a long text is read there before it is allowed). */
  private async _askWhole(id: string): Promise<void> {
    const q = this._waiting.get(id);
    if (!q) return;
    const r = q.request;
    const picked = await vscode.window.showWarningMessage(
      `An agent (${via(r)}) wants to type ${r.text.length} characters into the terminal "${r.name}":`,
      { modal: true, detail: readable(r.text, Infinity) },
      ...APPROVAL_CHOICES.map((c) => c.label),
    );
    await this._answer(id, APPROVAL_CHOICES.find((c) => c.label === picked)?.answer ?? 'deny', picked !== undefined);
  }

  private async _pickAndAnswer(): Promise<void> {
    const waiting = [...this._waiting.values()];
    if (waiting.length === 0) return;
    let q: Question | undefined = waiting[0];
    if (waiting.length > 1) {
      const pick = await vscode.window.showQuickPick(
        waiting.map((w) => ({ label: `$(terminal) ${w.request.name}`, detail: readable(w.request.text), q: w })),
        { title: 'Agents waiting for your answer' },
      );
      q = pick?.q;
    }
    if (!q) return;
    if (q.request.text.length > SHOWN_CHARS) return this._askWhole(q.request.id);
    const choice = await vscode.window.showQuickPick(
      APPROVAL_CHOICES.map((c) => ({ label: c.label, answer: c.answer })),
      { title: questionText(q.request), placeHolder: `What the agent would type into "${q.request.name}": ${readable(q.request.text)}` },
    );
    if (choice) await this._answer(q.request.id, choice.answer, true);
  }

  private async _answer(id: string, answer: ApprovalAnswer, chosen: boolean): Promise<void> {
    const q = this._waiting.get(id);
    if (!q) {
      if (chosen) void vscode.window.showInformationMessage('That request of an agent was already over (answered, or it timed out); nothing was typed for it.');
      return;
    }
    this._waiting.delete(id);
    this._render();
    this._log.info(`agent write into ${q.request.name} (${q.request.session}): ${answer}${chosen ? '' : ' (question closed)'}`);
    try {
      const r = await q.client.call('host/approve', { id, decision: answer });
      if (!r.decided && chosen)
        void vscode.window.showInformationMessage(
          `The agent's request to type into "${q.request.name}" was already over (answered elsewhere, or it timed out); nothing was typed for it.`,
        );
    } catch (e) {
      if (chosen) void vscode.window.showErrorMessage(`Could not answer the agent's request for "${q.request.name}": ${(e as Error).message}`);
    }
  }

  private _render(): void {
    const n = this._waiting.size;
    if (n === 0) {
      this._item.hide();
      return;
    }
    const first = [...this._waiting.values()][0].request;
    this._item.text = n === 1 ? `$(warning) Agent asks to type in ${first.name}` : `$(warning) ${n} agent requests`;
    this._item.tooltip =
      n === 1 ? `${questionText(first)}\nClick to answer.` : 'Agents wait for your answer before typing into your terminals. Click to answer.';
    this._item.show();
  }
}

/** The question: who asks, which terminal, and exactly what it would type. */
function questionText(r: ApprovalRequest): string {
  const more = r.text.length > SHOWN_CHARS ? ' Show All to read it before allowing it.' : '';
  return `An agent (${via(r)}) wants to type into the terminal "${r.name}": ${readable(r.text)}${more}`;
}

/** How the agent reaches the host, as the question names it. */
function via(r: ApprovalRequest): string {
  return r.transport === 'mcp-http' ? 'MCP over HTTP' : r.transport === 'mcp-stdio' ? 'MCP' : r.transport;
}

/** The agent's text as the user reads it: Enter as ⏎, other control characters as ^X, text past `max` cut. */
export function readable(text: string, max = SHOWN_CHARS): string {
  const shown = text.length > max ? text.slice(0, max) : text;
  const visible = shown.replace(/\r\n|\r|\n/g, '⏎').replace(/[\x00-\x1f\x7f]/g, (c) => (c === '\x7f' ? '^?' : `^${String.fromCharCode(c.charCodeAt(0) + 64)}`));
  return `"${visible}"${text.length > max ? ` (and ${text.length - max} more characters)` : ''}`;
}
