import { isUtf8 } from 'node:buffer';
import { Transform, type TransformCallback } from 'node:stream';
import { parseJSONRPCMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/server';
import { ErrorCode, errorResponse, RpcError } from '../../core/base/errors';
import { MAX_NESTING, nestsDeeperThan } from '../../core/base/nesting';

/**
 * What `shared-pty mcp` reads from stdin before the SDK's stdio transport sees it: one JSON-RPC
 * message per line. The SDK drops a line that is not JSON and reports one that is not JSON-RPC
 * only to its own error hook, so a client that sent either would wait for an answer that never
 * comes. Here such a line is answered as `/mcp` and our sockets answer it (docs/protocol.md,
 * "Errors"): -32700 for what is not JSON (or not UTF-8), -32600 for JSON that is not a message (with its `id`
 * when it has one); only valid messages go on. A line longer than the SDK would buffer is
 * answered -32600 and skipped, so memory stays bounded.
 */
export class StdinScreen extends Transform {
  private _partial: Buffer[] = [];
  private _partialBytes = 0;
  /** Inside a line too long to keep: its bytes are dropped up to its end. */
  private _skipping = false;

  /**
   * `_beforeEnd`: what the end of the input waits for before it reaches the SDK, whose transport
   * closes at that end and drops the calls still in flight (cli/mcp.ts: their answers).
   */
  constructor(
    private readonly _answer: (line: string) => void,
    private readonly _maxLineBytes = STDIO_DEFAULT_MAX_BUFFER_SIZE,
    private readonly _beforeEnd: () => Promise<void> = () => Promise.resolve(),
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      this._take(chunk.subarray(start, nl));
      this._endLine();
      start = nl + 1;
    }
    if (start < chunk.length) this._take(chunk.subarray(start));
    done();
  }

  override _flush(done: TransformCallback): void {
    // A last message without its newline is read as the sockets read one at a half-close.
    if (this._partial.length > 0 || this._skipping) this._endLine();
    // The lines pushed last are read (and counted by what `_beforeEnd` waits on) before it is asked.
    const whenRead = (): void => {
      if (this.readableLength > 0) setImmediate(whenRead);
      else void this._beforeEnd().then(() => done());
    };
    setImmediate(whenRead);
  }

  private _take(bytes: Buffer): void {
    if (this._skipping || bytes.length === 0) return;
    this._partialBytes += bytes.length;
    if (this._partialBytes > this._maxLineBytes) {
      this._partial = [];
      this._partialBytes = 0;
      this._skipping = true;
      this._answer(errorLine(ErrorCode.InvalidRequest, `Invalid Request: a message longer than ${this._maxLineBytes} bytes`, null));
      return;
    }
    this._partial.push(bytes);
  }

  private _endLine(): void {
    const bytes = Buffer.concat(this._partial);
    this._partial = [];
    this._partialBytes = 0;
    if (this._skipping) {
      this._skipping = false;
      return;
    }
    // Read as the sockets read a line: bytes that are not UTF-8 are a parse error, not U+FFFD in an id.
    if (!isUtf8(bytes)) {
      this._answer(errorLine(ErrorCode.ParseError, 'Parse error: invalid UTF-8', null));
      return;
    }
    const line = bytes.toString('utf8').replace(/\r$/, '');
    if (line.trim() === '') return;
    const refusal = refusalOf(line);
    if (refusal) this._answer(refusal);
    else this.push(line + '\n');
  }
}

/** The error line a client gets for `line`, or undefined when it is a JSON-RPC message. */
function refusalOf(line: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return errorLine(ErrorCode.ParseError, 'Parse error: invalid JSON', null);
  }
  try {
    parseJSONRPCMessage(value);
    // As `/mcp` answers it (and every other transport, in dispatch): a protocol error, not a tool's.
    if (nestsDeeperThan(value)) return errorLine(ErrorCode.InvalidParams, `Invalid params: the request nests deeper than ${MAX_NESTING} levels`, idOf(value));
    return undefined;
  } catch {
    if (Array.isArray(value)) return errorLine(ErrorCode.InvalidRequest, 'Invalid Request: one message per line (batches are not supported)', null);
    return errorLine(
      ErrorCode.InvalidRequest,
      'Invalid Request: not a JSON-RPC 2.0 message (jsonrpc "2.0", a string method, an id that is a string or a number)',
      idOf(value),
    );
  }
}

/** The id a message carries, when it is one a client could have sent (else null). */
function idOf(value: unknown): string | number | null {
  const id = value && typeof value === 'object' ? (value as { id?: unknown }).id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

function errorLine(code: ErrorCode, message: string, id: string | number | null): string {
  return JSON.stringify(errorResponse(id, new RpcError(code, message))) + '\n';
}
