// The frame writer gathers JSON-RPC lines into reused blocks: what the peer reads must be exactly
// what was written, in order, whatever the sizes, over a real Unix socket that fills up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { FrameWriter } from '../../../../src/transport/base/frame-writer';
import { heldBytes } from '../../../helpers/held-memory';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

/** The writer's block size and how many free ones its pool keeps (src/transport/base/frame-writer.ts). */
const BLOCK_BYTES = 256 * 1024;
const MAX_FREE_BLOCKS = 8;

async function socketPair(): Promise<{ a: net.Socket; b: net.Socket; done(): void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'frame-writer-'));
  const file = path.join(dir, 's.sock');
  const server = net.createServer();
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(file, resolve));
  const a = net.connect(file);
  const b = await accepted;
  return {
    a,
    b,
    done() {
      a.destroy();
      b.destroy();
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('frames of every size arrive whole and in order, corked or not', { timeout: 60_000 }, async () => {
  const { a, b, done } = await socketPair();
  try {
    const out = new FrameWriter(b);
    const sizes = [10, 5000, 70_000, 300_000, 1, 200_000, 65_536, 3];
    const expected: string[] = [];
    let n = 0;
    for (let round = 0; round < 6; round++) {
      const corked = round % 2 === 0;
      if (corked) out.cork();
      for (const size of sizes) {
        // Multi-byte characters and escapes, as terminal output has them; a counter makes each frame unique.
        const body = `${n++}:` + 'é€😀\u001b[31mx\r\n'.repeat(Math.ceil(size / 12)).slice(0, size);
        const frame = JSON.stringify({ data: body }) + '\n';
        expected.push(frame);
        out.write(frame);
      }
      if (corked) out.uncork();
    }
    const want = Buffer.from(expected.join(''));
    const chunks: Buffer[] = [];
    let got = 0;
    await new Promise<void>((resolve) => {
      a.on('data', (c: Buffer) => {
        chunks.push(c);
        got += c.length;
        if (got >= want.length) resolve();
      });
    });
    assert.ok(Buffer.concat(chunks).equals(want), 'the peer read exactly the frames written');
  } finally {
    done();
  }
});

test('writing to a socket the peer has closed does not throw', { timeout: 10_000 }, async () => {
  const { a, b, done } = await socketPair();
  try {
    b.on('error', () => {});
    a.destroy();
    await new Promise((r) => b.once('close', r));
    const out = new FrameWriter(b);
    out.cork();
    out.write('x'.repeat(100_000));
    out.uncork();
    out.write('y');
  } finally {
    done();
  }
});

test('a peer that does not read costs the bytes queued for it, not a block for every frame', { timeout: 30_000 }, async () => {
  const { a, b, done } = await socketPair();
  try {
    a.pause();
    const out = new FrameWriter(b);
    // Frames of 16 KiB, one at a time, as a busy subscription sends them, until 2 MiB wait in the
    // socket (twice a client's high-water mark) besides what the kernel holds.
    const frame = JSON.stringify({ data: 'y\n'.repeat(8 * 1024) }) + '\n';
    const held0 = heldBytes();
    while (b.writableLength < 2 * 1024 * 1024) out.write(frame);
    await new Promise((r) => setImmediate(r)); // the blocks the kernel took go back to the pool
    const grown = heldBytes() - held0;
    // Each queued frame used to pin a whole 256 KiB block: 10 times what was queued (24 MB here).
    // Allowed: the queued bytes, twice, and the writer's pool of free blocks (8) and the one in use.
    const bound = 2 * b.writableLength + (MAX_FREE_BLOCKS + 1) * BLOCK_BYTES;
    assert.ok(grown < bound, `${(grown / 1e6).toFixed(1)} MB held for ${(b.writableLength / 1e6).toFixed(1)} MB queued (at most ${(bound / 1e6).toFixed(1)})`);
  } finally {
    done();
  }
});
