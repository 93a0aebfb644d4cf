import * as path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readCastFile } from '../../core/session/recording/cast-file';
import type { Access, PageTarget } from '../base/access';
import { sendError } from '../base/http-util';
import type { ReplayLinks } from './replay-links';
import { escapeHtml, methodNotAllowed, pageHead, sendAsset, VIEW_SECURITY_HEADERS, type Asset } from './view-page';

/**
 * Headers of the replay pages: the view's, except that scripts may compile WebAssembly
 * (asciinema-player's terminal is Rust built to WASM, inlined in its script; no other code runs).
 */
export const REPLAY_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  ...VIEW_SECURITY_HEADERS,
  'content-security-policy':
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; style-src 'self' 'unsafe-inline'; " +
    "img-src 'self' data:; font-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

/** Where the built files live: next to the bundle (dist/), or dist/ of the checkout when running from source. */
function built(name: string): () => string[] {
  return () => [path.join(__dirname, name), path.join(__dirname, '..', '..', '..', 'dist', name)];
}

/** The replay page's assets: our script with asciinema-player bundled in, and the player's stylesheet. */
const ASSETS: Readonly<Record<string, Asset>> = {
  '/replay/assets/replay.js': { type: 'text/javascript; charset=utf-8', candidates: built('replay.js') },
  '/replay/assets/replay.js.map': { type: 'application/json; charset=utf-8', candidates: built('replay.js.map') },
  '/replay/assets/asciinema-player.css': { type: 'text/css; charset=utf-8', candidates: built('asciinema-player.css') },
};

/** A replay link's id: 32 hex digits, as ReplayLinks makes them (any other segment names nothing). */
const LINK_ID = /^[0-9a-f]{32}$/;

/**
 * Which page cookie grant opens a replay link's paths (its page, its file, its assets): that link's
 * (its page is where the link is traded); a segment that is no link's id, the shared assets' (any).
 */
export function replayTarget(id: string | undefined, isPage: boolean): { target: PageTarget; link: boolean } {
  if (id === undefined || !LINK_ID.test(id)) return { target: 'any', link: false };
  return { target: { replay: id }, link: isPage };
}

/**
 * What the replayer serves (docs/protocol.md#replay-in-the-browser): `GET /replay` (a page that replays a file the person
 * picks; it is read in the browser, nothing is uploaded), `GET /replay/<id>` (the page for a
 * recording `host/replay` made a link to) and `/replay/<id>/cast` (that file), and the assets under
 * `/replay/assets/` (and `/replay/<id>/assets/`). A file is reached only through a link's id: no
 * path from the request is ever opened.
 */
export type ReplayPart = { kind: 'picker' } | { kind: 'asset'; name: string } | { kind: 'link'; id: string; what: 'page' | 'cast' | { asset: string } };

/** Serves one part of the replayer, the router having matched its path. */
export function handleReplay(links: ReplayLinks, req: IncomingMessage, res: ServerResponse, url: URL, access: Access, part: ReplayPart): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res);
  if (part.kind === 'asset') return sendReplayAsset(req, res, url, part.name);
  if (part.kind === 'picker') return sendPage(req, res, renderPage('replay/assets'));
  if (!LINK_ID.test(part.id)) return sendError(res, 'NOT_FOUND', `No replay at ${url.pathname}`);
  // A token for one session opens that session only; a recording is none of them.
  if (access.onlySession !== undefined) return sendError(res, 'FORBIDDEN', `Forbidden: this token reaches only session ${access.onlySession}`);
  const link = links.get(part.id);
  if (!link) return sendError(res, 'NOT_FOUND', 'Unknown or expired replay link; make a new one with: shared-pty play <file> --browser');
  // A link's own copy of the assets (the page's relative paths stay under its link).
  if (typeof part.what === 'object') return sendReplayAsset(req, res, url, part.what.asset);
  const name = path.basename(link.path);
  // Relative to the page (…/replay/<id>), so it works under any proxy's prefix.
  if (part.what === 'page') return sendPage(req, res, renderPage(`${link.id}/assets`, { cast: `${link.id}/cast`, name }));
  void readCastFile(link.path, 'header').then(
    (text) => {
      if (res.headersSent) return;
      const body = Buffer.from(text, 'utf8');
      res.writeHead(200, { 'content-type': 'application/x-asciicast; charset=utf-8', 'content-length': body.length, ...REPLAY_SECURITY_HEADERS });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
    // The file changed or went away since the link was made. Its folder is not for the page to know.
    (e: Error) => sendError(res, 'NOT_FOUND', `Cannot replay ${name}: ${e.message.split(link.path).join(name)}`),
  );
}

function sendReplayAsset(req: IncomingMessage, res: ServerResponse, url: URL, name: string): void {
  const key = `/replay/assets/${name}`;
  sendAsset(req, res, url, Object.prototype.hasOwnProperty.call(ASSETS, key) ? ASSETS[key] : undefined, REPLAY_SECURITY_HEADERS);
}

function sendPage(req: IncomingMessage, res: ServerResponse, html: string): void {
  const body = Buffer.from(html, 'utf8');
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, ...REPLAY_SECURITY_HEADERS });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * The page, its assets under `assets` (relative to the page's address); `recording` is a file the
 * host serves, else the person picks one.
 */
function renderPage(assets: string, recording?: { cast: string; name: string }): string {
  const e = escapeHtml;
  const title = recording ? `${recording.name} — Shared PTY replay` : 'Replay a recording — Shared PTY';
  return `${pageHead(title, `${assets}/asciinema-player.css`)}<style>
  html, body { margin: 0; min-height: 100%; background: #1e1e1e; color: #d4d4d4; }
  body { display: flex; flex-direction: column; font: 13px system-ui, -apple-system, "Segoe UI", sans-serif; }
  header { display: flex; align-items: center; gap: 12px; min-height: 36px; box-sizing: border-box; padding: 4px 10px; background: #2d2d2d; border-bottom: 1px solid #3c3c3c; flex-wrap: wrap; }
  header .name { font-weight: 600; color: #fff; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
  header .spacer { flex: 1; }
  label { color: #9d9d9d; }
  select, input[type=file] { font: inherit; color: #d4d4d4; background: #3c3c3c; border: 1px solid #555; border-radius: 3px; }
  .status { color: #9d9d9d; }
  .status-error { color: #f48771; }
  main { flex: 1; display: flex; gap: 10px; padding: 10px; min-height: 0; }
  #player { flex: 1; min-width: 0; }
  #drop { flex: 1; display: flex; align-items: center; justify-content: center; border: 2px dashed #555; border-radius: 6px; color: #9d9d9d; min-height: 240px; }
  body.dragging #drop { border-color: #0e639c; color: #fff; }
  #drop[hidden], #markers-panel[hidden] { display: none; }
  #markers-panel { width: 280px; overflow: auto; }
  #markers-panel h2 { font-size: 12px; text-transform: uppercase; letter-spacing: .05em; color: #9d9d9d; margin: 0 0 6px; }
  #markers { list-style: none; margin: 0; padding: 0; }
  #markers button { display: block; width: 100%; text-align: left; font: 12px ui-monospace, "DejaVu Sans Mono", monospace; color: #d4d4d4; background: none; border: 0; padding: 3px 4px; cursor: pointer; }
  #markers button:hover { background: #2a2d2e; }
  #markers .time { color: #9d9d9d; margin-right: 6px; }
</style>
<script src="${e(assets)}/replay.js" defer></script>
</head>
<body${recording ? ` data-cast="${e(recording.cast)}" data-name="${e(recording.name)}"` : ''}>
<header>
  <span class="name" id="name">${recording ? e(recording.name) : 'Replay a recording'}</span>
  <label>Open a file <input type="file" id="file" accept=".cast,.json,.txt,application/x-asciicast"></label>
  <label>Speed <select id="speed"><option value="0.5">0.5×</option><option value="1" selected>1×</option><option value="2">2×</option><option value="4">4×</option><option value="8">8×</option></select></label>
  <span class="spacer"></span>
  <span class="status" id="status">${recording ? 'loading…' : 'pick a recording'}</span>
</header>
<main>
  <div id="drop"${recording ? ' hidden' : ''}>Drop an asciicast file (.cast) here, or open one above. It is read in this browser; nothing is uploaded.</div>
  <div id="player" aria-label="Recording"></div>
  <aside id="markers-panel" hidden><h2>Markers</h2><ol id="markers"></ol></aside>
</main>
<noscript>The replayer needs JavaScript.</noscript>
</body>
</html>
`;
}
