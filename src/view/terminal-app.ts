// The terminal view of MCP Apps (docs/guarantees.md#the-terminal-in-the-agents-chat; built into dist/terminal-app.html and served as the
// resource ui://shared-pty/terminal). A chat host renders it in a sandboxed iframe beside the
// result of a tool that shows a session; everything it knows and does goes through that host's
// bridge (the App class of @modelcontextprotocol/ext-apps): the tool result names the session, and
// the view calls our tools to draw and follow it, to show its state and to type.
import { App, applyDocumentTheme, applyHostStyleVariables, type McpUiDisplayMode, type McpUiHostContext } from '@modelcontextprotocol/ext-apps';
import { Terminal, type ITheme } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { followSession, ToolError, type CallTool, type Following } from './follow-session';
import { PersonActivity } from './person-activity';
import type { CommandRecord, SessionInfo } from '../core/methods/shapes';

/** Lines of history the view keeps. */
const SCROLLBACK_LINES = 5000;
/** Quiet after output before the header asks for the session's state and last command again. */
const STATUS_SETTLE_MS = 400;

const DARK: ITheme = { background: '#1e1e1e', foreground: '#d4d4d4', cursor: '#d4d4d4' };
const LIGHT: ITheme = { background: '#ffffff', foreground: '#1e1e1e', cursor: '#1e1e1e', selectionBackground: '#add6ff' };

declare global {
  interface Window {
    /** The terminal, for end-to-end tests. */
    __sharedPtyTerm?: Terminal;
    /** What the view shows, for end-to-end tests. */
    __sharedPtyApp?: { session: () => string | undefined; status: () => string };
  }
}

function el(id: string): HTMLElement {
  const found = document.getElementById(id);
  if (!found) throw new Error(`The page has no #${id}`);
  return found;
}

function start(): void {
  const title = el('title');
  const size = el('size');
  const state = el('state');
  const lastCommand = el('last-command');
  const fitButton = el('fit') as HTMLButtonElement;
  const pipButton = el('pip') as HTMLButtonElement;
  const fullscreenButton = el('fullscreen') as HTMLButtonElement;

  const term = new Terminal({
    cols: 80,
    rows: 24,
    scrollback: SCROLLBACK_LINES,
    fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", monospace',
    fontSize: 13,
    theme: DARK,
    allowProposedApi: true, // the unicode API below
  });
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = '11'; // widths as the host's mirror has them
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(el('terminal'));
  window.__sharedPtyTerm = term;

  // The display modes the view can live in (the host offers its own subset: applyContext).
  const app = new App({ name: 'Shared PTY terminal', version: '1' }, { availableDisplayModes: ['inline', 'pip', 'fullscreen'] }, { autoResize: true });
  const call: CallTool = async (name, args) => {
    const r = await app.callServerTool({ name, arguments: args });
    const text = (r.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');
    if (r.isError) throw new ToolError(text || `${name} failed`);
    return (r.structuredContent ?? {}) as Record<string, unknown>;
  };

  let following: Following | undefined;
  let running = true;
  /** The session's name as last listed (what the model is told the person typed in). */
  let sessionName = '';
  const setState = (text: string, kind: 'live' | 'exit' | 'error' | 'info') => {
    state.textContent = text;
    state.className = `state state-${kind}`;
  };
  const showSize = () => (size.textContent = `${term.cols}×${term.rows}`);
  term.onResize(showSize);
  showSize();

  /** The session's name, size, state and last command, as the tools report them now. */
  let statusTimer: number | undefined;
  const refreshStatus = () => {
    window.clearTimeout(statusTimer);
    statusTimer = window.setTimeout(() => void readStatus(), STATUS_SETTLE_MS);
  };
  const readStatus = async () => {
    const id = following?.session;
    if (!id) return;
    try {
      const { sessions } = (await call('list_sessions', {})) as { sessions: SessionInfo[] };
      const s = sessions.find((x) => x.id === id);
      if (!s || following?.session !== id) return;
      title.textContent = s.name;
      sessionName = s.name;
      if (s.cols !== term.cols || s.rows !== term.rows) term.resize(s.cols, s.rows);
      running = s.running;
      if (s.running) setState('live', 'live');
      else setState(s.exitCode === null ? 'exited' : `exited with code ${s.exitCode}`, 'exit');
      fitButton.hidden = !s.running;
      if (!s.integration) return;
      const { commands } = (await call('list_commands', { session: id, limit: 1 })) as { commands: CommandRecord[] };
      const c = commands.at(-1);
      if (!c) return;
      const status = c.exitCode !== null ? `exit ${c.exitCode}` : c.endCursor === null ? 'running' : 'ended';
      lastCommand.textContent = `$ ${c.command.split('\n')[0]}  [${status}]`;
      lastCommand.className = `last-command ${c.exitCode ? 'failed' : ''}`;
    } catch {
      // the header stays as it was; the terminal itself says whether the session is reachable
    }
  };

  const follow = (session: string) => {
    if (following?.session === session) return;
    following?.stop();
    activity = new PersonActivity();
    // The last session's name must not describe this one to the model.
    sessionName = '';
    setState('connecting…', 'info');
    following = followSession(session, call, {
      redraw(data, cols, rows) {
        term.reset();
        if (cols !== term.cols || rows !== term.rows) term.resize(cols, rows);
        term.write(data);
        setState('live', 'live');
        refreshStatus();
      },
      write(data) {
        term.write(data);
        refreshStatus();
      },
      exited(exitCode) {
        running = false;
        setState(exitCode === null ? 'exited' : `exited with code ${exitCode}`, 'exit');
        fitButton.hidden = true;
        refreshStatus();
      },
      problem(message, lasting) {
        setState(lasting ? message : `${message} (retrying)`, 'error');
      },
    });
    window.__sharedPtyApp!.session = () => session;
  };
  window.__sharedPtyApp = { session: () => undefined, status: () => state.textContent ?? '' };

  // The agent's call names the session (maybe by name or prefix): follow it while the tool runs
  // (a command's output as it comes); its result names the session by id.
  app.ontoolinput = ({ arguments: args }) => {
    if (typeof args?.session === 'string' && !following) follow(args.session);
  };
  app.ontoolresult = (result) => {
    const session = (result.structuredContent as { session?: unknown } | undefined)?.session;
    if (typeof session === 'string') follow(session);
    else if (result.isError && !following) setState('the tool failed: no session to show', 'error');
  };

  // What the person types here is theirs: the app-only tool app_input writes it as the user's
  // keys (never the agent's, whatever the host's agent policy), exactly as typed.
  // The key this page was served with: app_input writes nothing without it (src/transport/mcp/terminal-app.ts).
  const appKey = document.querySelector<HTMLMetaElement>('meta[name="shared-pty-app-key"]')?.content ?? '';
  let typing = Promise.resolve();
  let activity = new PersonActivity();
  const type = (data: string) => {
    const session = following?.session;
    if (!session || !running) return;
    typing = typing.then(() =>
      call('app_input', { session, data, appKey }).then(
        (r) => {
          if (following?.session !== session || !activity.typed(data, r.secretInput === true)) return;
          // The model knows sessions by name: typed before the view has listed them, it learns the name first.
          const tell = () => {
            if (following?.session === session) tellModel(activity.describe(sessionName || session));
          };
          if (sessionName) tell();
          else void readStatus().then(tell);
        },
        (e: Error) => setState(e.message, 'error'),
      ),
    );
  };
  // The model learns what the person did before its next turn, where the chat host takes such context.
  const tellModel = (text: string) => {
    if (!app.getHostCapabilities()?.updateModelContext) return;
    void app.updateModelContext({ content: [{ type: 'text', text }] }).catch(() => {}); // the host may refuse it: the session itself shows what happened
  };
  term.onData(type);
  term.onBinary(type);

  // The session has one size for everyone: it changes only when the person asks (Fit).
  fitButton.addEventListener('click', () => {
    const session = following?.session;
    const dims = fit.proposeDimensions();
    if (!session || !dims || !Number.isFinite(dims.cols) || !Number.isFinite(dims.rows)) return;
    const cols = Math.max(2, Math.floor(dims.cols));
    const rows = Math.max(1, Math.floor(dims.rows));
    void call('resize', { session, cols, rows }).then(
      () => term.resize(cols, rows),
      (e: Error) => setState(e.message, 'error'),
    );
  });

  // Picture-in-picture keeps the terminal in sight while the person reads the chat; fullscreen
  // gives a TUI room. Offered only where the host says it has the mode; a second click comes back inline.
  const modeButtons: Array<[HTMLButtonElement, McpUiDisplayMode]> = [
    [pipButton, 'pip'],
    [fullscreenButton, 'fullscreen'],
  ];
  let displayMode: McpUiDisplayMode = 'inline';
  const showMode = (mode: McpUiDisplayMode) => {
    displayMode = mode;
    for (const [button, m] of modeButtons) button.setAttribute('aria-pressed', String(m === mode));
  };
  for (const [button, mode] of modeButtons) {
    button.addEventListener('click', () => {
      const want = displayMode === mode ? 'inline' : mode;
      void app.requestDisplayMode({ mode: want }).then(
        (r) => showMode(r.mode),
        (e: Error) => setState(e.message, 'error'),
      );
    });
  }

  const applyContext = (ctx: McpUiHostContext | undefined) => {
    if (ctx?.theme) {
      applyDocumentTheme(ctx.theme);
      term.options.theme = ctx.theme === 'light' ? LIGHT : DARK;
    }
    if (ctx?.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
    if (ctx?.availableDisplayModes) for (const [button, mode] of modeButtons) button.hidden = !ctx.availableDisplayModes.includes(mode);
    if (ctx?.displayMode) showMode(ctx.displayMode);
  };
  app.onhostcontextchanged = (ctx) => applyContext(ctx);
  // The host is about to remove the view: no long poll of ours may outlive it.
  app.onteardown = () => {
    following?.stop();
    return {};
  };

  setState('waiting for the tool result…', 'info');
  app.connect().then(
    () => applyContext(app.getHostContext()),
    (e: Error) => setState(`no chat host: ${e.message}`, 'error'),
  );
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
