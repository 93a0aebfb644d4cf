import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml } from './view-page';

/** A small page of the host that says something in words: a refusal, the secret page's form. */
export interface WordPage {
  status: number;
  /** The heading, and the title before "— Shared PTY". */
  title: string;
  /** The page's HTML after its heading (escaped by the caller). */
  main: string;
  /** The page's own security headers (CSP, referrer policy, …). */
  headers: Readonly<Record<string, string>>;
  /** Lines added to `<head>` (a referrer `<meta>`, say). */
  head?: string;
  /** CSS added to the shared look. */
  css?: string;
}

/** Writes a word page (no body for HEAD), in the look every such page of the host shares. */
export function sendWordPage(req: IncomingMessage, res: ServerResponse, page: WordPage): void {
  const title = escapeHtml(page.title);
  const body = Buffer.from(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${page.head ?? ''}<link rel="icon" href="data:,">
<title>${title} — Shared PTY</title>
<style>
  html, body { margin: 0; height: 100%; background: #1e1e1e; color: #d4d4d4; font: 15px system-ui, -apple-system, "Segoe UI", sans-serif; }
  main { max-width: 36em; margin: 12vh auto 0; padding: 0 20px; line-height: 1.5; }
  h1 { font-size: 20px; color: #fff; font-weight: 600; }
${page.css ?? ''}</style>
</head>
<body>
<main>
<h1>${title}</h1>
${page.main}
</main>
</body>
</html>
`,
    'utf8',
  );
  res.writeHead(page.status, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, ...page.headers });
  res.end(req.method === 'HEAD' ? undefined : body);
}
