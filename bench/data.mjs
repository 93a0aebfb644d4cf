// The bench's build log: random bytes as base64 in 76-column lines (as `base64` prints them).
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';

/** Writes at least `mb` MiB of base64 lines to `file`; returns its size in bytes. */
export function writeBase64Lines(file, mb) {
  const fd = fs.openSync(file, 'w');
  const target = mb * 1024 * 1024;
  let written = 0;
  while (written < target) {
    const b64 = crypto.randomBytes(57 * 1024).toString('base64'); // 57 bytes -> 76 characters
    let chunk = '';
    for (let i = 0; i < b64.length; i += 76) chunk += b64.slice(i, i + 76) + '\n';
    fs.writeSync(fd, chunk);
    written += chunk.length;
  }
  fs.closeSync(fd);
  return fs.statSync(file).size;
}
