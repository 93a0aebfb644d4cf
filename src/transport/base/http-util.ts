import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, isLimitReached, RpcError, toRpcError } from '../../core/base/errors';

/** Largest JSON body a REST or `/mcp` request may send: a JSON-RPC line's limit (docs/protocol.md#2-framing). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The REST error codes of docs/protocol.md#rest, with their HTTP statuses; and ours: 413 for a
 * body over the limit, 429 for any other of the host's limits reached (README "Reliability").
 */
export type RestErrorCode = 'UNAUTHORIZED' | 'BAD_REQUEST' | 'NOT_FOUND' | 'FORBIDDEN' | 'PAYLOAD_TOO_LARGE' | 'TOO_MANY_REQUESTS' | 'INTERNAL';

const STATUS: Record<RestErrorCode, number> = {
  UNAUTHORIZED: 401,
  BAD_REQUEST: 400,
  NOT_FOUND: 404,
  FORBIDDEN: 403,
  PAYLOAD_TOO_LARGE: 413,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
};

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

export function sendError(res: ServerResponse, code: RestErrorCode, message: string): void {
  sendJson(res, STATUS[code], { ok: false, error: { code, message } });
}

/** Maps a method-table error to the REST envelope. */
export function sendRpcError(res: ServerResponse, err: unknown): void {
  if (err instanceof BodyTooLargeError) {
    res.setHeader('connection', 'close');
    return sendError(res, 'PAYLOAD_TOO_LARGE', err.message);
  }
  const e = toRpcError(err);
  sendError(res, restCodeOf(e), e.message);
}

function restCodeOf(e: RpcError): RestErrorCode {
  if (isLimitReached(e)) return 'TOO_MANY_REQUESTS';
  switch (e.code) {
    case ErrorCode.UnknownSession:
    case ErrorCode.MethodNotFound:
      return 'NOT_FOUND';
    case ErrorCode.InternalError:
      return 'INTERNAL';
    case ErrorCode.Forbidden:
      return 'FORBIDDEN';
    default:
      return 'BAD_REQUEST';
  }
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

/**
 * Reads a JSON object body (empty means `{}`), bounded to MAX_BODY_BYTES: a larger one (by its
 * Content-Length, or as it arrives) rejects with BodyTooLargeError and the rest is not kept. The
 * connection is marked to close after the answer, so a client that keeps sending cannot hold it.
 */
export function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const tooLarge = () => {
      req.removeAllListeners('data');
      req.resume(); // discard what still comes until the answer closes the connection
      reject(new BodyTooLargeError());
    };
    if (Number(req.headers['content-length']) > MAX_BODY_BYTES) return tooLarge();
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) return tooLarge();
      parts.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return;
      const text = Buffer.concat(parts).toString('utf8').trim();
      if (!text) return resolve({});
      try {
        const v = JSON.parse(text);
        if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
        resolve(v as Record<string, unknown>);
      } catch {
        reject(new RpcError(ErrorCode.ParseError, 'Body must be a JSON object'));
      }
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
