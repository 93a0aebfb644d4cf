import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Refused } from '../base/access';
import { sendError } from '../base/http-util';
import { escapeHtml, VIEW_SECURITY_HEADERS } from './view-page';
import { sendWordPage } from './word-page';

/** What a person reads when a page does not open: a heading and what to do. */
interface Words {
  title: string;
  text: string;
}

const ASK = 'Ask the person who shares this terminal for a new link.';

/** Each reason a browser's request opens nothing, in words (docs/protocol.md, Links and page cookies). */
const WORDS: Readonly<Record<Refused, Words>> = {
  used: {
    title: 'This link was already used',
    text:
      'A shared link opens its page once, in the first browser that opens it; after that the link itself opens nothing, ' +
      'so nobody who sees it later (on a shared screen, in a browser history) can use it. If you opened it before, the page ' +
      `still opens in that browser. ${ASK}`,
  },
  'link-only': {
    title: 'This is a link for a browser',
    text: `This token opens a page once, when it is opened as a link. ${ASK}`,
  },
  revoked: { title: 'This link was revoked', text: `The person who shared it ended it: it opens nothing any more. ${ASK}` },
  expired: { title: 'This link has expired', text: `It was shared for a limited time, which is over. ${ASK}` },
  'session-ended': { title: 'This session has ended', text: `The terminal this link was for has closed, and the link with it. ${ASK}` },
  unknown: {
    title: 'This link opens nothing',
    text: `It is not a link of this Shared PTY host: it may be cut short, or the host has restarted since (links end with their host). ${ASK}`,
  },
  elsewhere: { title: 'This link is for another page', text: 'Open the link exactly as you received it.' },
  'host-token': {
    title: "Links do not carry the host's own token",
    text: "This address holds the host's own token, which never opens a page. Make a link with: shared-pty view <session> (or shared-pty share).",
  },
  'no-grant': {
    title: 'This browser has no access to this page',
    text: `The links opened in this browser reach other pages of this host, not this one. ${ASK}`,
  },
  none: {
    title: 'This page needs a link',
    text: 'Open the link you were given; shared-pty view and shared-pty share make them.',
  },
};

/** Whether the request is a browser's navigation (it asks for HTML); API clients get JSON. */
export function wantsHtml(req: IncomingMessage): boolean {
  return /\btext\/html\b/.test(req.headers.accept ?? '');
}

/** The JSON message of a refusal, for API clients (a link offered as a Bearer token says what to use instead). */
export function refusalMessage(why: Refused): string {
  if (why === 'used') {
    return "Unauthorized: this token's link was opened, and a link's token opens nothing after that; for scripts and agents make one with: shared-pty share <session> --reusable";
  }
  if (why === 'link-only') return 'Unauthorized: this token is a replay link for a browser (it opens that page only)';
  if (why === 'revoked' || why === 'expired') return `Unauthorized: this token was ${why === 'revoked' ? 'revoked' : 'valid until it expired'}`;
  if (why === 'session-ended') return "Unauthorized: this token's session has ended (a session's token ends with it)";
  return 'Unauthorized: send Authorization: Bearer <token>';
}

/**
 * Refuses a request for one of the host's pages: a page that says why in words for a browser, the
 * JSON envelope for everything else: 401, or 403 for a page the browser's links do not reach.
 */
export function sendRefusal(req: IncomingMessage, res: ServerResponse, why: Refused, foreignHost = false): void {
  // Under a Host not the host's own (a proxy, or a DNS-rebinding page), whatever fails is 403, as
  // every request there that opens nothing (docs/protocol.md#pages-behind-an-editors-proxy).
  const status = foreignHost || why === 'elsewhere' || why === 'no-grant' ? 403 : 401;
  if (!wantsHtml(req)) {
    if (foreignHost) return sendError(res, 'FORBIDDEN', `Forbidden: unexpected Host header (${refusalMessage(why)})`);
    if (why === 'elsewhere') return sendError(res, 'FORBIDDEN', 'Forbidden: this link is for another page');
    if (why === 'no-grant') return sendError(res, 'FORBIDDEN', 'Forbidden: the links opened in this browser do not reach this page');
    return sendError(res, 'UNAUTHORIZED', refusalMessage(why));
  }
  const w = WORDS[why];
  sendWordPage(req, res, {
    status,
    title: w.title,
    main: `<p>${escapeHtml(w.text)}</p>`,
    headers: VIEW_SECURITY_HEADERS,
    head: '<meta name="referrer" content="no-referrer">\n',
  });
}
