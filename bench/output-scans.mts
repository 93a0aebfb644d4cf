// What the main thread's per-read scans of the output cost (the cursor-query check and the shell
// integration's mark filter, src/core/session/view-answers.ts and src/core/commands/own-marks.ts),
// in ms per MB of plain and of coloured output cut into 4095-byte reads as a PTY gives them; with a
// second tree, that tree's and this one's alternating, 7 rounds, medians (bench/README.md).
//
//   node --import tsx bench/output-scans.mts [/path/to/another/tree]
import * as crypto from 'node:crypto';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const trees = [...(process.argv[2] ? [path.resolve(process.argv[2])] : []), here];
const ROUNDS = 7;
const READ_BYTES = 4095;
const MB = 16;

const b64 = crypto.randomBytes(57 * 4096).toString('base64');
const plainLine = (i: number) => b64.slice((i * 76) % (b64.length - 76), ((i * 76) % (b64.length - 76)) + 76) + '\n';
const colouredLine = (i: number) =>
  `\x1b[3${i % 8}mINFO\x1b[0m [\x1b[1;34mmodule-${i % 97}\x1b[0m] compiled \x1b[32m${i}\x1b[0m files in \x1b[33m${i % 1000} ms\x1b[0m\n`;
function reads(line: (i: number) => string): Buffer[] {
  const lines: string[] = [];
  for (let i = 0, n = 0; n < MB * 1e6; i++) n += lines[lines.push(line(i)) - 1].length;
  const all = Buffer.from(lines.join(''));
  const out: Buffer[] = [];
  for (let o = 0; o < all.length; o += READ_BYTES) out.push(Buffer.from(all.subarray(o, o + READ_BYTES)));
  return out;
}
const kinds = { plain: reads(plainLine), coloured: reads(colouredLine) };

const scanners = await Promise.all(
  trees.map(async (tree) => {
    const { ViewAnswers } = await import(path.join(tree, 'src/core/session/view-answers.ts'));
    const { OwnMarkFilter } = await import(path.join(tree, 'src/core/commands/own-marks.ts'));
    return {
      name: tree === here ? 'this tree' : tree,
      'cursor-query check': () => {
        const v = new ViewAnswers();
        return (d: Buffer) => v.sawOutput(d);
      },
      'mark filter': () => {
        const f = new OwnMarkFilter('0123456789abcdef');
        return (d: Buffer) => f.filter(d);
      },
    };
  }),
);

const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const results = new Map<string, number[]>();
for (let r = 0; r < ROUNDS; r++) {
  for (const [kind, chunks] of Object.entries(kinds)) {
    const mb = chunks.reduce((n, c) => n + c.length, 0) / 1e6;
    for (const s of r % 2 ? [...scanners].reverse() : scanners) {
      for (const what of ['cursor-query check', 'mark filter'] as const) {
        const scan = s[what]();
        const t0 = performance.now();
        for (const c of chunks) scan(c);
        const key = `${what}, ${kind}, ${s.name}`;
        results.set(key, [...(results.get(key) ?? []), (performance.now() - t0) / mb]);
      }
    }
  }
}
for (const [key, v] of results) console.log(`${key}: median ${median(v).toFixed(3)} ms/MB (runs ${v.map((x) => x.toFixed(2)).join(' ')})`);
