// The browser view of a session (dist/view.js, served by the host at /view/view.js).
// It shows the session live through `GET /sessions/:id/stream` and, unless the view is read-only,
// sends what the person types. It renders at the session's own size and follows it when someone
// else resizes the terminal; only the "Fit to window" button (writable views) resizes the PTY,
// since a shared terminal has one size for everyone.
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import type { SessionInfo } from '../core/methods/shapes';
import type { STREAM_CLOSE, StreamClientFrame, StreamServerFrame } from '../core/methods/stream-frames';

/** Lines of history the view keeps (more than the screen: the replay can be long). */
const SCROLLBACK_LINES = 10000;
/** How often the page asks the host for the session's size (the stream carries no resize events). */
const SIZE_POLL_MS = 1000;
/** RIS: a full reset that xterm.js applies in order with the output written before it. */
const FULL_RESET = '\x1bc';

/**
 * The stream's close codes the page tells apart: the host's declaration is not bundled here, so
 * they are written out, and typed by it (a code changed there fails the typecheck here).
 */
const CLOSED: { [K in 'unknownSession' | 'tokenEnded' | 'tooSlow']: (typeof STREAM_CLOSE)[K]['code'] } = {
  unknownSession: 4004,
  tokenEnded: 4401,
  tooSlow: 4008,
};

/** What the page reads of `GET /sessions/:id`'s SessionInfo. */
type SessionState = Pick<SessionInfo, 'cols' | 'rows' | 'running' | 'exitCode'>;

declare global {
  interface Window {
    /** The terminal, for end-to-end tests. */
    __sharedPtyTerm?: Terminal;
    /** What the view is doing, for end-to-end tests. */
    __sharedPtyView?: { readOnly: boolean; state: () => string; resyncs: () => number };
  }
}

function intAttr(el: HTMLElement, name: string, fallback: number): number {
  const n = Number.parseInt(el.dataset[name] ?? '', 10);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

function start(): void {
  const body = document.body;
  const container = document.getElementById('terminal');
  if (!container) return;
  const params = new URLSearchParams(location.search);
  const readOnly = body.dataset.readonly === '1' || params.get('readonly') === '1';
  const sizeLabel = document.getElementById('size');
  const statusLabel = document.getElementById('status');
  const badge = document.getElementById('readonly-badge');
  const fitButton = document.getElementById('fit') as HTMLButtonElement | null;

  let state = 'connecting';
  const setStatus = (text: string, kind: 'info' | 'error' | 'exit' = 'info') => {
    state = text;
    if (!statusLabel) return;
    statusLabel.textContent = text;
    statusLabel.className = `status status-${kind}`;
  };

  if (badge) badge.hidden = !readOnly;

  const term = new Terminal({
    cols: intAttr(body, 'cols', 80),
    rows: intAttr(body, 'rows', 24),
    scrollback: SCROLLBACK_LINES,
    disableStdin: readOnly,
    cursorBlink: !readOnly,
    fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", monospace',
    fontSize: 14,
    theme: { background: '#1e1e1e', foreground: '#d4d4d4' },
    allowProposedApi: true, // the unicode API below
  });
  // Character widths as the host's mirror and VS Code have them (emoji take two cells).
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = '11';
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(container);
  window.__sharedPtyTerm = term;
  let resyncs = 0;
  window.__sharedPtyView = { readOnly, state: () => state, resyncs: () => resyncs };

  const showSize = () => {
    if (sizeLabel) sizeLabel.textContent = `${term.cols}×${term.rows}`;
  };
  showSize();
  term.onResize(showSize);

  // resync=1: where the view fell behind and output was lost, the host sends a fresh picture instead of closing.
  // Relative to the page (…/sessions/<id>/view → …/sessions/<id>/stream): under a proxy's prefix it stays under it.
  const wsUrl = new URL(`stream?resync=1${readOnly ? '&readonly=1' : ''}`, location.href);
  wsUrl.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(wsUrl);
  let exited = false;
  let open = false;
  const send = (msg: StreamClientFrame) => {
    if (open && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  };

  ws.addEventListener('open', () => {
    open = true;
    setStatus(readOnly ? 'live (read-only)' : 'live');
    if (fitButton && !readOnly) fitButton.hidden = false;
    if (!readOnly) term.focus();
  });
  ws.addEventListener('message', (ev) => {
    if (typeof ev.data !== 'string') return;
    let msg: StreamServerFrame;
    try {
      msg = JSON.parse(ev.data) as StreamServerFrame;
    } catch {
      return;
    }
    if (msg.type === 'data' && typeof msg.data === 'string') term.write(msg.data);
    else if (msg.type === 'snapshot' && typeof msg.data === 'string') redraw(msg);
    else if (msg.type === 'exit') onExit(msg.exitCode);
    else if (msg.type === 'error' && !readOnly) setStatus(`error: ${msg.message}`, 'error');
  });
  ws.addEventListener('close', (ev) => {
    open = false;
    if (fitButton) fitButton.hidden = true;
    stopPolling();
    if (exited) return;
    term.options.disableStdin = true;
    if (ev.code === CLOSED.unknownSession) setStatus('unknown session', 'error');
    // The link's token was revoked or expired, or its session ended (reason says which).
    else if (ev.code === CLOSED.tokenEnded)
      setStatus(
        ev.reason === 'session ended'
          ? 'closed: the session has ended'
          : `closed: this link's ${ev.reason === 'token expired' ? 'access has expired' : 'access was revoked'}`,
        'error',
      );
    else if (ev.code === CLOSED.tooSlow) setStatus('disconnected: the view fell too far behind; reload the page', 'error');
    // No close frame (1006) or "going away" (1001): the host was killed or stopped.
    else if (ev.code === 1006 || ev.code === 1001)
      setStatus('disconnected: the Shared PTY host stopped or cannot be reached; reload the page once it runs again', 'error');
    else setStatus('disconnected; reload the page to reconnect', 'error');
  });

  /** After a gap: a clean terminal of the session's size, then the host's picture of it. */
  function redraw(snap: { data: string; cols: number; rows: number }): void {
    // The reset goes through the write queue (RIS, ESC c): term.reset() would act at once, before
    // output that arrived earlier is parsed, which would then be drawn under the picture.
    term.write(FULL_RESET);
    applySize(snap.cols, snap.rows);
    term.write(snap.data);
    resyncs++;
  }

  function onExit(exitCode: number | null): void {
    exited = true;
    term.options.disableStdin = true;
    term.options.cursorBlink = false;
    setStatus(exitCode === null ? 'exited' : `exited with code ${exitCode}`, 'exit');
  }

  if (!readOnly) {
    term.onData((data) => send({ type: 'write', data }));
    term.onBinary((data) => send({ type: 'write', data }));
  }

  // The session's size is the truth; follow it. A poll that began before our own resize is stale.
  let generation = 0;
  const applySize = (cols: number, rows: number) => {
    if (Number.isInteger(cols) && Number.isInteger(rows) && cols > 0 && rows > 0 && (cols !== term.cols || rows !== term.rows)) {
      term.resize(cols, rows);
    }
  };
  let pollTimer: number | undefined;
  let polling = false;
  const poll = async () => {
    if (polling || !open) return;
    polling = true;
    const gen = generation;
    try {
      const r = await fetch(location.pathname, { headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' });
      if (r.ok) {
        const body = (await r.json()) as { ok?: boolean; data?: SessionState };
        if (body.ok && body.data && gen === generation && open) applySize(body.data.cols, body.data.rows);
      }
    } catch {
      // the host may be gone; the WebSocket's close says so
    } finally {
      polling = false;
    }
  };
  pollTimer = window.setInterval(() => void poll(), SIZE_POLL_MS);
  function stopPolling(): void {
    if (pollTimer !== undefined) window.clearInterval(pollTimer);
    pollTimer = undefined;
  }

  fitButton?.addEventListener('click', () => {
    if (readOnly || !open) return;
    const dims = fit.proposeDimensions();
    if (!dims || !Number.isFinite(dims.cols) || !Number.isFinite(dims.rows)) return;
    const cols = Math.max(2, Math.floor(dims.cols));
    const rows = Math.max(1, Math.floor(dims.rows));
    generation++;
    applySize(cols, rows);
    send({ type: 'resize', cols, rows });
    term.focus();
  });

  if (body.dataset.running === '0') {
    const code = Number.parseInt(body.dataset.exitCode ?? '', 10);
    setStatus(Number.isInteger(code) ? `exited with code ${code}` : 'exited', 'exit');
  } else {
    setStatus('connecting…');
  }
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
