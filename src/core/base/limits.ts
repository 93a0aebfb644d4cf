/**
 * What one host, socket and connection may hold at once (README "Reliability"). A local client,
 * buggy or hostile, cannot go past them: the call or connection over a limit gets a clear
 * error, and everyone else is served as before. Each can be lowered per host (HostOptions).
 */

/** Sessions one host lists at once, exited ones included until closed or expired (each holds a PTY, a screen and a 1 MiB ring). */
export const MAX_SESSIONS = 256;
/** Connections open at once on one session socket. */
export const MAX_CONNECTIONS_PER_SESSION_SOCKET = 64;
/** Connections open at once on the host's control socket. */
export const MAX_CONTROL_CONNECTIONS = 256;
/**
 * Connections open at once to the host's HTTP server (REST, WebSockets, `/mcp`, the browser view)
 * with one credential (the host's token, each scoped token, each link): a local tool never needs
 * more, and a guest holding all of its own leaves the owner's untouched.
 */
export const MAX_HTTP_CONNECTIONS = 256;
/**
 * Connections to the HTTP server that have not authenticated yet, at once; past it the oldest is
 * closed. They are counted apart from every credential's, so clients without a token cannot crowd
 * out those with one; a client with its token sends it in its first request, so it is one of
 * these only for the moment it takes to send that request.
 */
export const MAX_UNAUTHENTICATED_HTTP_CONNECTIONS = 256;
/**
 * How long an HTTP connection may stay open without a request that authenticates: a client with
 * its token sends it within milliseconds; 5 s leaves room on a loaded machine. (Node's own limit,
 * 60 s for the headers checked every 30 s, let 330 idle sockets hold the server for about 75 s.)
 */
export const HTTP_AUTHENTICATE_WITHIN_MS = 5000;
/**
 * Requests one connection may have started and not yet answered (a `pty/wait` can last a day);
 * over HTTP, where a connection is no lasting client, requests in flight with one token.
 */
export const MAX_IN_FLIGHT_REQUESTS = 1024;

/** Longest life of a scoped token: 30 days (it ends with its host anyway). */
export const MAX_TOKEN_SECONDS = 30 * 24 * 3600;

/** Longest session name (`session/create`'s `name`, the CLI's `--name`): a label, not a document. */
export const MAX_SESSION_NAME_CHARS = 200;

/**
 * What a session name may not hold: control characters (C0, DEL, C1), and the invisible ones that
 * reorder or hide text (bidirectional overrides and isolates, zero-width spaces and joiners, the
 * byte-order mark), and half of a UTF-16 pair (no character: JSON that jq refuses). A name is printed as it is (`shared-pty list`, the editor's tabs): an escape
 * sequence in it would be run by the terminal of whoever lists the sessions, and an override would
 * show another name than the one selected; an agent may name the sessions it opens.
 */
export const SESSION_NAME_CONTROL =
  // Variation selectors are in the class on purpose, each alone: they are what it looks for.
  // eslint-disable-next-line no-misleading-character-class
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufe00-\ufe0f\ufeff\u{e0000}-\u{e007f}\ud800-\udfff]/u;
/** What a refused session name is told (SESSION_NAME_CONTROL). */
export const SESSION_NAME_RULE =
  'a session name may not hold control characters (an escape, a newline, a tab), invisible ones (a bidirectional override, a zero-width space) nor half of a UTF-16 pair';

/** The overridable limits of one host. */
export interface HostLimits {
  maxSessions?: number;
  maxConnectionsPerSessionSocket?: number;
  maxControlConnections?: number;
  maxInFlightRequests?: number;
  maxHttpConnections?: number;
}
