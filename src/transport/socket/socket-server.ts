import * as fs from 'node:fs';
import * as net from 'node:net';
import type { DispatchMode } from '../../core/methods/dispatch';
import { errorResponse, limitReached, serverError, type RpcError } from '../../core/base/errors';
import type { HostServices } from '../../core/methods/types';
import { formatAddress, type Endpoint } from '../base/address';
import { RpcConnection } from './rpc-connection';

// Addresses live in their own module so clients (the CLI, the editor) need not load the server side.
export type { Endpoint } from '../base/address';

export interface RpcServerOptions {
  endpoint: Endpoint;
  mode: DispatchMode;
  services: HostServices;
  maxLineBytes?: number;
  /** Connections open at once; one more gets one JSON-RPC error line and is closed. */
  maxConnections: number;
  /** Requests each connection may have in flight (see RpcConnection). */
  maxInFlightRequests?: number;
}

/** A listening JSON-RPC socket. */
export interface RpcServer {
  readonly address: string;
  readonly endpoint: Endpoint;
  /** Connections open now (a host with none and no session may end: src/host/exit-empty.ts). */
  readonly connections: number;
  /**
   * Listens again at the Unix socket's path when its file was deleted (a tmp cleaner, a user's
   * `rm`): true when it did. Connections already open are not affected either way.
   */
  restoreSocketFile(): Promise<boolean>;
  /**
   * Stops taking connections on a Unix socket whose folder is no longer ours (taken over by
   * someone else): new connections are closed at once and the socket file is never put back.
   * The listener itself stays open, unreferenced, for the life of the process: closing it would
   * unlink whatever sits at its path now, a path someone else controls. Open connections go on.
   */
  abandon(why: string): void;
  /**
   * Takes no more connections from now on (the Unix socket's file goes at once); open connections
   * go on until `close`. A killed session's endpoint is gone before the kill is answered, as
   * socket-pty has it: whoever connects after the answer is refused.
   */
  stopListening(): void;
  close(): Promise<void>;
}

/**
 * How long a closing server's connections have to answer what they were asked and send the
 * session's exit (answers come within milliseconds of it), before a client that never reads is cut.
 */
const CLOSE_GRACE_MS = 2000;

/** Listens for JSON-RPC clients; Unix sockets get mode 0600 and a stale file is replaced. */
export async function listenRpc(options: RpcServerOptions): Promise<RpcServer> {
  const sockets = new Map<net.Socket, RpcConnection>();
  /** Why the runtime directory was given up (set once abandoned): said to whoever still connects. */
  let abandoned: string | undefined;
  let stopped = false;
  const onConnection = (socket: net.Socket) => {
    if (abandoned !== undefined) return refuseWithError(socket, serverError(abandoned));
    if (sockets.size >= options.maxConnections) return refuseConnection(socket, sockets.size, options.maxConnections);
    // Each connection is one ClientLink (in RpcConnection); on a session socket it counts as the session's client.
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const connection = new RpcConnection(socket, {
      mode: options.mode,
      services: options.services,
      maxLineBytes: options.maxLineBytes,
      maxInFlightRequests: options.maxInFlightRequests,
      // Browsers can reach a TCP port (a web page's fetch); they cannot reach a Unix socket.
      jsonRpcFirst: options.endpoint.type === 'tcp',
    });
    sockets.set(socket, connection);
  };
  let endpoint = options.endpoint;
  if (endpoint.type === 'unix') await removeStaleSocket(endpoint.path);
  let server = await listenOn(endpoint, onConnection);
  if (endpoint.type === 'tcp') endpoint = { ...endpoint, port: (server.address() as net.AddressInfo).port };
  const unixPath = endpoint.type === 'unix' ? endpoint.path : undefined;
  let closing: Promise<void> | undefined;
  return {
    address: formatAddress(endpoint),
    endpoint,
    get connections() {
      return sockets.size;
    },
    async restoreSocketFile() {
      if (!unixPath || closing || abandoned !== undefined || stopped || fs.existsSync(unixPath)) return false;
      // The old listener answers no one now (its file is gone); connections made through it go on.
      // Closed first: closing a Unix listener unlinks its path, which would take the new file.
      server.close();
      server = await listenOn({ type: 'unix', path: unixPath }, onConnection);
      if (closing) server.close(); // closed meanwhile: the new listener goes too
      return !closing;
    },
    stopListening() {
      if (stopped || abandoned !== undefined || closing) return;
      stopped = true;
      server.close();
      if (unixPath) fs.rmSync(unixPath, { force: true });
    },
    abandon(why) {
      if (!unixPath || abandoned !== undefined) return;
      abandoned = why;
      server.unref();
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        // Done once every connection has closed and let go of what it held (its client count,
        // its subscriptions): the server's own close can come a turn before its sockets' close events.
        const connectionsClosed = [...sockets.keys()].map((s) => new Promise<void>((r) => s.once('close', () => r())));
        // An abandoned listener is left open (see abandon): only its connections end.
        const serverClosed = abandoned || stopped ? Promise.resolve() : new Promise<void>((r) => server.close(() => r()));
        // Each answers what it was asked first (RpcConnection.finish); a client that does not read is cut.
        for (const c of sockets.values()) c.finish();
        setTimeout(() => {
          for (const s of sockets.keys()) s.destroy();
        }, CLOSE_GRACE_MS).unref();
        if (unixPath && !abandoned && !stopped) fs.rmSync(unixPath, { force: true });
        void Promise.all([serverClosed, ...connectionsClosed]).then(() => resolve());
      });
      return closing;
    },
  };
}

/**
 * A connection over the limit: one error line that names the limit, then closed. Not counted
 * and not read; destroyed soon in case the client never reads its end.
 */
function refuseConnection(socket: net.Socket, open: number, max: number): void {
  refuseWithError(socket, limitReached(`Too many connections: ${open} open on this socket, the limit is ${max}; closing this one`, 'connections', max));
}

/** Answers a connection with one error (id null), read by none of its requests, and closes it. */
function refuseWithError(socket: net.Socket, error: RpcError): void {
  socket.on('error', () => socket.destroy());
  socket.end(JSON.stringify(errorResponse(null, error)) + '\n');
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * The longest Unix socket path the kernel takes (`sun_path` less its NUL: 108 bytes on Linux, 104
 * on macOS and the BSDs). Node binds a longer one cut short, at a path outside the folder asked for.
 */
const MAX_UNIX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103;

/** A server listening on `endpoint` (a Unix socket gets mode 0600). */
async function listenOn(endpoint: Endpoint, onConnection: (socket: net.Socket) => void): Promise<net.Server> {
  if (endpoint.type === 'unix' && Buffer.byteLength(endpoint.path) > MAX_UNIX_SOCKET_PATH_BYTES) {
    throw new Error(
      `The socket path ${endpoint.path} is ${Buffer.byteLength(endpoint.path)} bytes, longer than a Unix socket allows ` +
        `(${MAX_UNIX_SOCKET_PATH_BYTES}); use a shorter runtime directory (SHARED_PTY_DIR) or socket path`,
    );
  }
  // Half-open: a client that ends its input after sending (`nc -N`, socat) still gets its answers.
  const server = net.createServer({ allowHalfOpen: true }, onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (endpoint.type === 'unix') server.listen(endpoint.path, resolve);
    else server.listen(endpoint.port, endpoint.host, resolve);
  });
  server.on('error', () => {});
  if (endpoint.type === 'unix') {
    // chmod follows links: only the socket we just made is changed (our folder is checked before we listen).
    if (!fs.lstatSync(endpoint.path, { throwIfNoEntry: false })?.isSocket()) {
      server.close();
      throw new Error(`${endpoint.path} is not the socket just made there; refusing to use it`);
    }
    fs.chmodSync(endpoint.path, 0o600);
  }
  return server;
}

/**
 * A socket file nobody answers on is left over from a crash: remove it; a live one is an error, and
 * so is anything else at the path (a user's file, a symlink), which is never removed.
 */
async function removeStaleSocket(path: string): Promise<void> {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(path);
  } catch {
    return; // nothing there
  }
  if (!stat.isSocket()) throw new Error(`${path} exists and is not a socket: choose another path (it is left as it is)`);
  const alive = await new Promise<boolean>((resolve) => {
    const probe = net.connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (alive) throw new Error(`Another server is already listening on ${path}`);
  fs.rmSync(path, { force: true });
}
