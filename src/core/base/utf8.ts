/** The most bytes one UTF-8 character takes. */
export const MAX_UTF8_CHARACTER_BYTES = 4;

/**
 * Length of the longest prefix of `buf` that ends on a UTF-8 character boundary.
 * PTY reads may split a multi-byte character; we hold back the partial tail so every
 * chunk we store, parse or publish decodes cleanly.
 */
export function completeUtf8Length(buf: Uint8Array): number {
  const n = buf.length;
  // A UTF-8 sequence is at most 4 bytes, so only the last 3 bytes can start an incomplete one.
  for (let back = 1; back <= Math.min(3, n); back++) {
    const b = buf[n - back];
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

/** Number of leading continuation bytes (a read that starts mid-character after the ring dropped data). */
export function leadingContinuationBytes(buf: Uint8Array): number {
  let i = 0;
  while (i < buf.length && i < 3 && (buf[i] & 0xc0) === 0x80) i++;
  return i;
}

/** Largest cut ≤ `max` that does not split a character. */
export function utf8CutPoint(buf: Uint8Array, max: number): number {
  if (max >= buf.length) return buf.length;
  let cut = max;
  while (cut > 0 && (buf[cut] & 0xc0) === 0x80) cut--;
  return cut;
}

/**
 * Where a read of at most `max` bytes from the start of `buf` ends: the largest cut ≤ `max` that
 * splits no character, or, when the first character alone is longer than `max`, just after it (a
 * lead byte and its continuation bytes, at most 4). So a reader that pages with a `max` smaller than
 * a character still moves on, one whole character a read, instead of getting nothing forever.
 */
export function utf8ReadEnd(buf: Uint8Array, max: number): number {
  const cut = utf8CutPoint(buf, max);
  if (cut > 0 || buf.length === 0) return cut;
  let end = 1;
  while (end < buf.length && end < MAX_UTF8_CHARACTER_BYTES && (buf[end] & 0xc0) === 0x80) end++;
  return end;
}
