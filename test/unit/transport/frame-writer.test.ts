// The frame writer gathers JSON-RPC lines into reused blocks: what the peer reads must be exactly
// what was written, in order, whatever the sizes, over a real Unix socket that fills up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { FrameWriter } from '../../../src/transport/socket/frame-writer';

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
