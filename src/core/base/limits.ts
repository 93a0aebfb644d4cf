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
/** Connections open at once to the host's HTTP server (REST, WebSockets, `/mcp`, the browser view); a local tool never needs more. */
export const MAX_HTTP_CONNECTIONS = 256;
/**
 * Requests one connection may have started and not yet answered (a `pty/wait` can last a day);
 * over HTTP, where a connection is no lasting client, requests in flight with one token.
 */
export const MAX_IN_FLIGHT_REQUESTS = 1024;

/** The overridable limits of one host. */
export interface HostLimits {
  maxSessions?: number;
  maxConnectionsPerSessionSocket?: number;
  maxControlConnections?: number;
  maxInFlightRequests?: number;
  maxHttpConnections?: number;
}
