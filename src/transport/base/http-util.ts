import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, jsonRpcErrorOf, REST_STATUS, restErrorOf, RpcError, type RestErrorCode } from '../../core/base/errors';

/** Largest JSON body a REST or `/mcp` request may send: a JSON-RPC line's limit (docs/protocol.md#2-framing). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Most of a body over the limit read (and dropped) before the 413, so the client is not cut off mid-send; beyond, the connection is closed. */
const MAX_DRAINED_BYTES = 64 * 1024 * 1024;

/** A request body over MAX_BODY_BYTES: answered 413, and the connection is closed after the answer. */
export class BodyTooLargeError extends RpcError {
  constructor() {
    super(ErrorCode.InvalidRequest, `Request body larger than ${MAX_BODY_BYTES} bytes`);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

export function sendOk(res: ServerResponse, data: unknown): void {
  sendJson(res, 200, { ok: true, data });
}

/** A JSON-RPC error answered over HTTP (`/mcp`), with the HTTP status the request's failure has. */
export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  err: unknown,
  id: string | number | null = null,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { jsonrpc: '2.0', id, error: jsonRpcErrorOf(err) }, headers);
}

/** A REST error of the transport's own (no method-table error behind it): unauthorized, no route, a malformed path. */
export function sendError(res: ServerResponse, code: RestErrorCode, message: string): void {
  sendJson(res, REST_STATUS[code], { ok: false, error: { code, message } });
}

/** Answers a method-table error as REST does (restErrorOf: its status, and the envelope with its JSON-RPC code). */
export function sendRpcError(res: ServerResponse, err: unknown): void {
  const answer = restErrorOf(err);
  // A body over the limit: the connection closes after the answer, so a client that keeps sending cannot hold it.
  if (err instanceof BodyTooLargeError) {
    res.setHeader('connection', 'close');
    answer.status = REST_STATUS.PAYLOAD_TOO_LARGE;
    answer.body.error.code = 'PAYLOAD_TOO_LARGE';
  }
  sendJson(res, answer.status, answer.body);
}

/**
 * A path segment with its percent-encoding decoded, or undefined when the encoding is malformed
 * (`%`, `%zz`, a cut UTF-8 sequence): the caller answers 400 instead of throwing.
 */
export function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** A body's bytes as text; invalid UTF-8 throws. */
const BODY_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a JSON object body (empty means `{}`, or with `emptyIsJson: false` a parse error), bounded to MAX_BODY_BYTES: a larger one (by its
 * Content-Length, or as it arrives) rejects with BodyTooLargeError and the rest is not kept. The
 * connection is marked to close after the answer, so a client that keeps sending cannot hold it.
 */
export function readJsonBody(req: IncomingMessage, options: { emptyIsJson?: boolean } = {}): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const tooLarge = () => {
      req.removeAllListeners('data');
      // Answered once the body has come (discarded, up to MAX_DRAINED_BYTES): a connection closed
      // while the client still sends is reset, and a client that sends before it reads (Node's
      // fetch) got EPIPE, never the 413. A client that waits for `100 Continue` sent none of it.
      const sendsNothing = /100-continue/i.test(req.headers.expect ?? '');
      if (sendsNothing || req.complete) {
        req.resume(); // whatever still comes is dropped until the answer closes the connection
        return reject(new BodyTooLargeError());
      }
      let drained = size;
      req.on('data', (c: Buffer) => {
        drained += c.length;
        if (drained > MAX_DRAINED_BYTES) {
          req.removeAllListeners('data');
          reject(new BodyTooLargeError());
        }
      });
      req.on('end', () => reject(new BodyTooLargeError()));
      req.resume();
    };
    if (Number(req.headers['content-length']) > MAX_BODY_BYTES) return tooLarge();
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) return tooLarge();
      parts.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return;
      let text: string;
      try {
        // Bytes that are not UTF-8 are refused as on the sockets, never typed as U+FFFD.
        text = BODY_UTF8.decode(Buffer.concat(parts)).trim();
      } catch {
        return reject(new RpcError(ErrorCode.ParseError, 'Parse error: the body is not valid UTF-8'));
      }
      // REST reads an empty body as `{}` (no params); a JSON-RPC body must be a message (-32700).
      if (!text) return options.emptyIsJson === false ? reject(new RpcError(ErrorCode.ParseError, 'Parse error: the body is empty')) : resolve({});
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch {
        return reject(new RpcError(ErrorCode.ParseError, 'Parse error: the body is not valid JSON'));
      }
      // Valid JSON of another kind (a batch, a string) is a request of the wrong shape, not a parse error.
      if (!v || typeof v !== 'object') return reject(new RpcError(ErrorCode.InvalidRequest, 'Invalid Request: the body must be a JSON object'));
      if (Array.isArray(v))
        return reject(new RpcError(ErrorCode.InvalidRequest, 'Invalid Request: the body must be one JSON object (batches are not supported)'));
      resolve(v as Record<string, unknown>);
    });
    req.on('error', reject);
  });
}

/** An AbortSignal that fires when the client goes away before we answer. */
export function requestSignal(req: IncomingMessage, res: ServerResponse): AbortSignal {
  const ac = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) ac.abort();
  });
  return ac.signal;
}
