import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/server';

// The terminal view of MCP Apps (docs/guarantees.md#the-terminal-in-the-agents-chat): one HTML page, served as a `ui://` resource, that a
// chat host renders beside the result of a tool that shows a session. The names below are the MCP
// Apps specification's (SEP-1865, `@modelcontextprotocol/ext-apps`); a test checks them against it.

/** The resource the tools that show a session point at. */
export const TERMINAL_APP_URI = 'ui://shared-pty/terminal';
/** The MIME type of an MCP App's HTML. */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** The key of MCP Apps under `capabilities.extensions`. */
export const APPS_EXTENSION_ID = 'io.modelcontextprotocol/ui';

/** The server's declaration of the extension: it serves HTML views. */
export const APPS_EXTENSION_CAPABILITY = { mimeTypes: [APP_MIME_TYPE] };

/** Where the build writes the page (esbuild.mjs): next to the bundle, or in dist/ when running from source. */
function pageCandidates(): string[] {
  return [path.join(__dirname, 'terminal-app.html'), path.join(__dirname, '..', '..', '..', 'dist', 'terminal-app.html')];
}

let cached: string | undefined;

/**
 * The key of this process's terminal views: written into the page the chat host renders, and
 * required by `app_input`. A chat host hides app-only tools from the model, but a client that
 * renders no MCP Apps may list `app_input` to it; without the key, which only the page holds (the
 * model reads tool results, not the page), the model cannot type as the user through it.
 */
const APP_KEY = crypto.randomBytes(24).toString('base64url');
/** The page's `<meta>` that carries the key (src/view/terminal-app.ts reads it). */
export const APP_KEY_META = 'shared-pty-app-key';
/** The tool argument that carries the key back. */
export const APP_KEY_ARG = 'appKey';

/** Whether `given` is this process's app key (compared in constant time). */
export function isAppKey(given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const digest = (s: string) => crypto.createHash('sha256').update(s).digest();
  return crypto.timingSafeEqual(digest(given), digest(APP_KEY));
}

/** The page's HTML, with this process's app key; read once (it is part of the build, it does not change while the host runs). */
export function terminalAppHtml(): string {
  if (cached !== undefined) return cached;
  for (const file of pageCandidates()) {
    try {
      const page = fs.readFileSync(file, 'utf8');
      cached = page.replace('</head>', `<meta name="${APP_KEY_META}" content="${APP_KEY}"></head>`);
      return cached;
    } catch {
      // try the next place
    }
  }
  throw new Error(`The terminal view is not built (looked for ${pageCandidates().join(', ')}): run npm run build`);
}

/** Lists the terminal view and serves it on `resources/read`. */
export function registerTerminalApp(server: McpServer): void {
  server.registerResource(
    'terminal',
    TERMINAL_APP_URI,
    {
      title: 'Shared PTY terminal',
      description: 'A live view of a shared terminal session (xterm.js), shown beside the tools that open, run in or read a session.',
      mimeType: APP_MIME_TYPE,
    },
    (uri) => ({
      // The page fetches nothing of its own: no CSP domains to declare.
      contents: [{ uri: uri.href, mimeType: APP_MIME_TYPE, text: terminalAppHtml(), _meta: { ui: { prefersBorder: true } } }],
    }),
  );
}
