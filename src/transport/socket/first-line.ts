import { requestId } from '../rpc/json-rpc-peer';
/**
 * What a per-session TCP port accepts first (docs/protocol.md, "Per-session TCP"): a JSON-RPC
 * message. Any web page can make the browser open a connection to a loopback port and send an
 * HTTP request (`fetch(…, {mode: 'no-cors'})` needs no permission), and a JSON-RPC line hidden in
 * its body would otherwise be run. An HTTP request always begins with its request line, so a
 * connection whose first line is not a JSON object naming `jsonrpc` is closed before anything in
 * it is read further — as Redis refuses `POST` and `Host:`.
 */

/** Bytes a JSON text may begin with before its first value (JSON's whitespace). */
const WHITESPACE = new Set([0x20, 0x09, 0x0d, 0x0a]);
/** A line may begin with UTF-8's byte order mark, which the decoder drops (as on a Unix socket). */
const UTF8_BOM_START = 0xef;

/**
 * The bytes a JSON value can begin with (`{`, `[`, `"`, `-`, a digit, `t`, `f`, `n`). Only `{` can
 * begin a request; any other JSON (a batch, `null`) is refused once its line has ended, as Invalid
 * Request like on later lines, not as a Parse error. No HTTP request line begins with one of them.
 */
const JSON_STARTS = new Set([...'{["-0123456789tfn'].map((c) => c.charCodeAt(0)).concat(UTF8_BOM_START));

/**
 * The first byte of `chunk` that is not whitespace: whether it can begin JSON (`true`/`false`), or
 * undefined when the chunk holds only whitespace. Lets a port refuse an HTTP request line at its
 * first byte, without waiting for the line to end.
 */
export function firstByteFitsJsonRpc(chunk: Uint8Array): boolean | undefined {
  for (const b of chunk) {
    if (WHITESPACE.has(b)) continue;
    return JSON_STARTS.has(b);
  }
  return undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * What a first line is: a JSON-RPC 2.0 request or notification (valid UTF-8 JSON, an object with
 * `jsonrpc: "2.0"` and a string `method`), other JSON, or not JSON. Anything but the first keeps
 * the connection from being served, an invalid request included.
 */
export function firstLineKind(line: Uint8Array): { kind: 'json-rpc' | 'not-json' } | { kind: 'json'; id: string | number | null; text: string } {
  let value: unknown;
  let text: string;
  try {
    text = utf8.decode(line);
    value = JSON.parse(text);
  } catch {
    return { kind: 'not-json' };
  }
  const m = value as { jsonrpc?: unknown; method?: unknown } | null;
  if (typeof m === 'object' && m !== null && !Array.isArray(m) && m.jsonrpc === '2.0' && typeof m.method === 'string') return { kind: 'json-rpc' };
  // Its id is echoed when it has one of a request's kinds, as a socket's later lines are answered.
  return { kind: 'json', id: requestId(value) ?? null, text };
}

/** Whether a line has nothing in it but whitespace (skipped, as between messages). */
export function isBlankLine(line: Uint8Array): boolean {
  return firstByteFitsJsonRpc(line) === undefined;
}

/**
 * The refusal's message (one JSON-RPC error line, its id the line's when it has one, then the connection is closed), after
 * its code's name: "Parse error" for a line that is not JSON (-32700, as socket-pty answers
 * invalid JSON), "Invalid Request" for JSON that is not a JSON-RPC message (-32600).
 */
export function notJsonRpcMessage(json: boolean): string {
  return `${json ? 'Invalid Request' : 'Parse error'}: this port speaks JSON-RPC only (one message per line) and the first line was not a JSON-RPC message (an HTTP request?); closing the connection`;
}
