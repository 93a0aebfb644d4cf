import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HostServices } from '../../core/methods/types';
import type { InputSource } from '../../core/session/input/input-source';
import type { Session } from '../../core/session/session';
import { escapeHtml } from './view-page';
import type { SecretLinkRefused, SecretLinks } from './secret-links';
import { sendWordPage } from './word-page';

// The secret page (docs/protocol.md#secret-pages): `/secret/<one-time id>`, opened by the person
// from their agent's client (URL-mode elicitation) or from a link the refusal carried. The id is
// the credential; the secret goes from the form straight into the PTY and is kept, logged and
// answered nowhere.

/** Largest form accepted: a passphrase, with room to spare; anything larger is not a secret someone types. */
const MAX_SECRET_BODY_BYTES = 4096;

/** C0 controls and DEL: Enter, Ctrl+C, Escape… A secret typed on the page holds none of them. */
const CONTROL_KEY = /[\x00-\x1f\x7f]/;

/** Who writes what the page sends: the person, through the secret page. */
const PERSON_AT_THE_PAGE: InputSource = { origin: 'user', transport: 'secret-page' };

/**
 * What every answer of the page carries: nothing runs in it, it posts only to itself, no frame
 * can hold it (no clickjacking of the form), its address goes to no other site, no cache keeps it.
 */
const SECRET_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  // Not no-referrer: a browser then sends `Origin: null` with the form, and the page could not tell itself from a stranger.
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** Why the page does nothing, in words: each refusal's status, title and text. */
const REFUSALS: Readonly<Record<SecretLinkRefused | 'not-asking' | 'ended' | 'origin' | 'form', { status: number; title: string; text: string }>> = {
  // 401, as any request without a credential: the page's id is the only one it takes.
  unknown: {
    status: 401,
    title: 'This page opens nothing',
    text: 'It is not a secret page of this Shared PTY host (the host may have restarted since). Ask your agent again.',
  },
  used: {
    status: 410,
    title: 'This page was already used',
    text: 'A secret page takes one secret, once. If the program still asks, ask your agent for a new one, or type it in the terminal.',
  },
  expired: {
    status: 410,
    title: 'This page has expired',
    text: 'A secret page works for five minutes. If the program still asks, ask your agent for a new one, or type it in the terminal.',
  },
  'not-asking': {
    status: 409,
    title: 'The program no longer asks for a secret',
    text: 'Nothing was typed: the terminal is not waiting for a password or passphrase now. The page still works: send it again when the program asks.',
  },
  // Gone for good, as a used or expired page: the program that asked will not ask again.
  ended: {
    status: 410,
    title: 'The session has ended',
    text: "Nothing was typed: the terminal's program has exited, so this page has nothing more to type into.",
  },
  origin: { status: 403, title: 'Refused', text: 'A secret is taken only from this page itself.' },
  form: {
    status: 400,
    title: 'Nothing was typed',
    text: `The form must carry one field, secret, of at most ${MAX_SECRET_BODY_BYTES} bytes, on one line, without control keys. The page still works.`,
  },
};

/**
 * `GET /secret/<id>`: the form, while the link works and its session asks for a secret.
 * `POST /secret/<id>` (the form, from this host's own origin): if the session still asks for a
 * secret, uses the link and writes the secret and Enter into it; else the link keeps working.
 */
export async function handleSecretPage(services: HostServices, links: SecretLinks, req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
  if (req.method === 'GET' || req.method === 'HEAD') {
    const link = links.peek(id);
    if ('refused' in link) return refuse(req, res, link.refused);
    const session = await askingSession(services, link.session);
    if (typeof session === 'string') return refuse(req, res, session);
    return page(req, res, 200, `A password for ${session.name}`, form(session));
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'GET, HEAD, POST', ...SECRET_PAGE_HEADERS });
    return void res.end();
  }
  // Only the page itself may send a secret: a page of any other site (or a request with no
  // Origin) cannot type into the terminal through a link it learnt. The link is not spent.
  if (req.headers.origin !== `http://${req.headers.host}`) return refuse(req, res, 'origin');
  const secret = (await readForm(req))?.get('secret');
  // One line and no control key: the page types a secret and its Enter, never a line after it
  // (a secret with Enter and a command in it would run that command as the person).
  if (secret === null || secret === undefined || CONTROL_KEY.test(secret)) return refuse(req, res, 'form');
  const link = links.peek(id);
  if ('refused' in link) return refuse(req, res, link.refused);
  const session = await askingSession(services, link.session);
  // Nothing typed, so the link is not spent: the person may send it again when the program asks again.
  if (typeof session === 'string') return refuse(req, res, session);
  // Taken in the same turn as the write: of two forms sent at once, one types and the other is refused.
  const taken = links.take(id);
  if ('refused' in taken) return refuse(req, res, taken.refused);
  session.write(secret + '\r', PERSON_AT_THE_PAGE);
  return page(req, res, 200, 'Typed', `<p>Typed into the terminal of ${escapeHtml(session.name)}, followed by Enter. You can close this page.</p>`);
}

/** The session of a link, if its program asks for a secret right now; else why not: it does not ask now, or it has ended. */
async function askingSession(services: HostServices, id: string): Promise<Session | 'not-asking' | 'ended'> {
  const session = services.registry.get(id);
  if (!session?.running) return 'ended';
  if ((await session.inputWatch.probeNow()) !== 'secret_input') return 'not-asking';
  // It may have ended while the probe ran.
  return session.running ? session : 'ended';
}

function form(session: Session): string {
  const e = escapeHtml;
  return `<p>The program in the terminal <b>${e(session.name)}</b> asks for a password or passphrase. What you type here goes straight into that terminal, followed by Enter: your agent does not see it, and it is kept nowhere.</p>
<form method="post" autocomplete="off">
<input type="password" name="secret" autofocus aria-label="Secret" autocomplete="off">
<button type="submit">Type it</button>
</form>
<p class="note">This page works once, for five minutes, and only while the program asks.</p>`;
}

function refuse(req: IncomingMessage, res: ServerResponse, why: keyof typeof REFUSALS): void {
  const r = REFUSALS[why];
  page(req, res, r.status, r.title, `<p>${escapeHtml(r.text)}</p>`);
}

function page(req: IncomingMessage, res: ServerResponse, status: number, title: string, main: string): void {
  const css = `  input { font: inherit; padding: 4px 6px; width: 60%; }
  button { font: inherit; padding: 4px 10px; }
  .note { opacity: 0.7; font-size: 13px; }
`;
  sendWordPage(req, res, { status, title, main, headers: SECRET_PAGE_HEADERS, css });
}

/** The form's fields (application/x-www-form-urlencoded), or undefined when it is too large or cut off. */
function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_SECRET_BODY_BYTES) parts.push(c);
    });
    req.on('end', () => resolve(size > MAX_SECRET_BODY_BYTES ? undefined : new URLSearchParams(Buffer.concat(parts).toString('utf8'))));
    req.on('error', () => resolve(undefined));
  });
}
