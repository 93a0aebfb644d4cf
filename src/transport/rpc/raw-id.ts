/**
 * Request ids echoed as the client wrote them (docs/protocol.md#2-framing). JSON numbers past 2^53
 * (`9007199254740993`, a 64-bit id a Go or Python client may use) lose digits in a JavaScript
 * number, and an answer written back from it would carry another id that its client cannot match.
 * Such an id keeps the text it came as, and the answer is written with that text.
 */

/** Where a response keeps its id's text as the client wrote it (JSON.stringify leaves symbols out). */
export const RAW_ID = Symbol('rawId');

/** A response that may carry its id's original text. */
export interface WithRawId {
  [RAW_ID]?: string;
}

/**
 * Whether a parsed id may not be what its client wrote: an integer beyond what a double holds
 * exactly (`9007199254740993`, `9007199254740993.0`, `12345678901234567890e0`), or a zero that was
 * a number too small for a double (`1e-400`). Other ids print as written; their text is not looked for.
 */
export function idMayHaveLostDigits(id: unknown): id is number {
  return typeof id === 'number' && Number.isFinite(id) && Number.isInteger(id) && (!Number.isSafeInteger(id) || id === 0);
}

/** A JSON number literal, up to what follows it in an object. */
const NUMBER_LITERAL = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=[\s,}])/;

/** The text of the message's top-level `"id"` member when it is a number literal; undefined otherwise. */
export function rawIdText(text: string): string | undefined {
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      const isIdKey = depth === 1 && text.slice(i, end + 1) === '"id"';
      i = end + 1;
      if (!isIdKey) continue;
      while (/\s/.test(text[i] ?? '')) i++;
      if (text[i] !== ':') continue; // "id" as a value, not a key
      i++;
      while (/\s/.test(text[i] ?? '')) i++;
      return NUMBER_LITERAL.exec(text.slice(i, i + 400))?.[0];
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    i++;
  }
  return undefined;
}

/** The index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}

/** A message as one line of JSON, its id written as the client wrote it when it was kept. */
export function stringifyMessage(msg: object & WithRawId): string {
  const raw = msg[RAW_ID];
  if (raw === undefined) return JSON.stringify(msg);
  // The id follows "jsonrpc" in every response we make, so the first `"id":0` is the top-level one.
  return JSON.stringify({ ...msg, id: 0 }).replace('"id":0', `"id":${raw}`);
}
