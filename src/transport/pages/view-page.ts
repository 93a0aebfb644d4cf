import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as path from 'node:path';
import type { HostServices, SessionInfo } from '../../core/methods/types';
import { invoke } from '../../core/methods/dispatch';
import { oneShotCaller } from '../../core/io/caller';
import type { Access } from '../base/access';
import { requestSignal, sendError, sendJson, sendRpcError } from '../base/http-util';

/** The browser view's reads are its own, as its stream's writes are (input records name the view by it). */
const VIEW_TRANSPORT = 'ws-stream';

/**
 * Headers of everything the view serves. No inline script runs (the page passes its data in
 * attributes); xterm.js sets inline styles, hence style-src 'unsafe-inline'. The page may not be
 * framed, so another site cannot overlay it and steer a person's typing.
 */
export const VIEW_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; connect-src 'self' ws://127.0.0.1:* ws://localhost:*; style-src 'self' 'unsafe-inline'; " +
    "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** The view's assets: URL path → file name in dist/, and where else to look when running from source. */
const ASSETS: Readonly<Record<string, Asset>> = {
  '/view/view.js': {
    type: 'text/javascript; charset=utf-8',
    candidates: () => [path.join(__dirname, 'view.js'), path.join(__dirname, '..', '..', '..', 'dist', 'view.js')],
  },
  '/view/view.js.map': {
    type: 'application/json; charset=utf-8',
    candidates: () => [path.join(__dirname, 'view.js.map'), path.join(__dirname, '..', '..', '..', 'dist', 'view.js.map')],
  },
  '/view/xterm.css': {
    type: 'text/css; charset=utf-8',
    candidates: () => [
      // dist/xterm.css, copied by the build next to the bundles (the VSIX has no node_modules)
      path.join(__dirname, 'xterm.css'),
      // dist/../node_modules when running the bundle from a checkout
      path.join(__dirname, '..', 'node_modules', '@xterm', 'xterm', 'css', 'xterm.css'),
      // src/transport/../../ under tsx
      path.join(__dirname, '..', '..', '..', 'dist', 'xterm.css'),
      path.join(__dirname, '..', '..', '..', 'node_modules', '@xterm', 'xterm', 'css', 'xterm.css'),
    ],
  },
};

/**
 * `GET /sessions/:id/view`: the browser view of a session. The token never reaches this page
 * (the server has already traded `?token=` for a cookie). With `Accept: application/json` it
 * answers the session's size and state instead, which the page polls to follow resizes.
 */
export async function handleViewPage(
  services: HostServices,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  access: Access,
  selector: string,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res);
  // What the page shows is pty/info's answer, through the method table: the token's reach and scope
  // are checked there as on every surface (a scoped token learns nothing of other sessions: 403).
  let info: SessionInfo;
  try {
    info = (await invoke(
      'pty/info',
      { session: selector },
      { mode: { kind: 'control' }, services, caller: oneShotCaller('user', VIEW_TRANSPORT, access), signal: requestSignal(req, res) },
    )) as SessionInfo;
  } catch (e) {
    return sendRpcError(res, e);
  }
  const readOnly = access.scope === 'view' || url.searchParams.get('readonly') === '1';

  if (/\bapplication\/json\b/.test(req.headers.accept ?? '')) {
    return sendJson(
      res,
      200,
      { ok: true, data: { id: info.id, name: info.name, cols: info.cols, rows: info.rows, running: info.running, exitCode: info.exitCode, readOnly } },
      { ...VIEW_SECURITY_HEADERS },
    );
  }

  const html = renderPage({
    id: info.id,
    name: info.name,
    command: [info.command, ...info.args].map(quoteWord).join(' '),
    cols: info.cols,
    rows: info.rows,
    running: info.running,
    exitCode: info.exitCode,
    readOnly,
  });
  const body = Buffer.from(html, 'utf8');
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, ...VIEW_SECURITY_HEADERS });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * `GET /view/view.js`, `/view/view.js.map`, `/view/xterm.css` (also under a session's folder,
 * `/sessions/<id>/view/…`, where the page finds them): the bundled assets (no CDN). `assetPath`
 * is the `/view/…` part.
 */
export function handleViewAsset(req: IncomingMessage, res: ServerResponse, assetPath: string): void {
  const asset = Object.prototype.hasOwnProperty.call(ASSETS, assetPath) ? ASSETS[assetPath] : undefined;
  sendAsset(req, res, new URL(assetPath, 'http://127.0.0.1'), asset);
}

/** A file the host serves from its build (dist/), and where to look for it. */
export interface Asset {
  type: string;
  candidates: () => string[];
}

/** Answers with `asset` (a page's script or style), or a clear 404 when there is none or it is not built. */
export function sendAsset(req: IncomingMessage, res: ServerResponse, url: URL, asset: Asset | undefined, headers = VIEW_SECURITY_HEADERS): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res);
  if (!asset) return sendError(res, 'NOT_FOUND', `No view asset ${url.pathname}`);
  const file = asset.candidates().find((p) => fs.existsSync(p));
  if (!file) return sendError(res, 'NOT_FOUND', `The browser view is not built (${path.basename(url.pathname)} missing; run npm run build)`);
  fs.readFile(file, (err, data) => {
    if (err) return sendError(res, 'NOT_FOUND', `Cannot read ${path.basename(url.pathname)}`);
    if (res.headersSent) return;
    res.writeHead(200, { 'content-type': asset.type, 'content-length': data.length, ...headers });
    res.end(req.method === 'HEAD' ? undefined : data);
  });
}

interface PageData {
  id: string;
  name: string;
  command: string;
  cols: number;
  rows: number;
  running: boolean;
  exitCode: number | null;
  readOnly: boolean;
}

/**
 * The start of a page the host serves, up to its own `<style>`: no referrer (a link's token must not
 * leak), no favicon request, its title and its one stylesheet.
 */
export function pageHead(title: string, stylesheet: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${escapeHtml(stylesheet)}">
`;
}

function renderPage(d: PageData): string {
  const e = escapeHtml;
  const status = d.running ? 'connecting…' : d.exitCode === null ? 'exited' : `exited with code ${d.exitCode}`;
  // Relative URLs (from …/sessions/<id>/view), so the page works under any proxy's prefix.
  return `${pageHead(`${d.name} — Shared PTY`, 'view/xterm.css')}<style>
  html, body { margin: 0; height: 100%; background: #1e1e1e; color: #d4d4d4; }
  body { display: flex; flex-direction: column; font: 13px system-ui, -apple-system, "Segoe UI", sans-serif; }
  header { display: flex; align-items: center; gap: 12px; height: 32px; box-sizing: border-box; padding: 0 10px; background: #2d2d2d; border-bottom: 1px solid #3c3c3c; white-space: nowrap; }
  header .name { font-weight: 600; color: #fff; }
  header .command, header .size { font-family: ui-monospace, "DejaVu Sans Mono", monospace; color: #9d9d9d; overflow: hidden; text-overflow: ellipsis; }
  header .spacer { flex: 1; }
  .badge { font-size: 11px; padding: 1px 7px; border-radius: 9px; background: #8a5a00; color: #fff; text-transform: uppercase; letter-spacing: .04em; }
  .badge[hidden] { display: none; }
  .status { color: #9d9d9d; }
  .status-error { color: #f48771; }
  .status-exit { color: #dcdcaa; }
  button { font: inherit; padding: 2px 10px; background: #0e639c; color: #fff; border: 0; border-radius: 3px; cursor: pointer; }
  button:hover { background: #1177bb; }
  button[hidden] { display: none; }
  header a { color: #3794ff; text-decoration: none; }
  header a:hover { text-decoration: underline; }
  #terminal { flex: 1; min-height: 0; overflow: auto; padding: 6px; }
</style>
<script src="view/view.js" defer></script>
</head>
<body data-session-id="${e(d.id)}" data-name="${e(d.name)}" data-cols="${d.cols}" data-rows="${d.rows}" data-running="${d.running ? '1' : '0'}" data-exit-code="${d.exitCode ?? ''}" data-readonly="${d.readOnly ? '1' : '0'}">
<header>
  <span class="name">${e(d.name)}</span>
  <span class="command" title="${e(d.command)}">${e(d.command)}</span>
  <span class="size" id="size">${d.cols}×${d.rows}</span>
  <span class="badge" id="readonly-badge"${d.readOnly ? '' : ' hidden'}>read-only</span>
  <span class="spacer"></span>
  <span class="status" id="status">${e(status)}</span>
  <a id="replay-link" href="replay" target="_blank" rel="noopener" title="Replay an asciicast recording (shared-pty record) in this browser">Replay a recording</a>
  <button type="button" id="fit" hidden title="Resize the shared terminal to this window (it changes for everyone)">Fit to window</button>
</header>
<main id="terminal" aria-label="Terminal of ${e(d.name)}"></main>
<noscript>The terminal view needs JavaScript.</noscript>
</body>
</html>
`;
}

export function methodNotAllowed(res: ServerResponse): void {
  sendJson(res, 405, { ok: false, error: { code: 'BAD_REQUEST', message: 'Only GET is allowed here' } }, { allow: 'GET, HEAD' });
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function quoteWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}
