// The other end of a Unix socket, from the kernel's socket diagnostics (src/core/process/proc/unix-peer.ts),
// on real sockets of this process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { unixPeerOf } from '../../../../src/core/process/proc/unix-peer';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

const linux = process.platform === 'linux';

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

/** The inode of this process's fd `fd`. */
const inodeOf = (fd: number) => fs.statSync(`/proc/self/fd/${fd}`).ino;
const fdOf = (handle: unknown) => (handle as { _handle: { fd: number } })._handle.fd;

test(
  "a connected Unix socket's peer is the server's end; a listener, a socket that is gone or a made-up inode has none",
  { skip: !linux && 'needs Linux' },
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-peer-'));
    const accepted: net.Socket[] = [];
    const server = net.createServer((s) => accepted.push(s));
    await new Promise<void>((r) => server.listen(path.join(dir, 's.sock'), r));
    const client = net.connect(path.join(dir, 's.sock'));
    try {
      await new Promise<void>((r) => client.once('connect', r));
      while (accepted.length === 0) await new Promise((r) => setTimeout(r, 5));
      const clientIno = inodeOf(fdOf(client));
      const serverEndIno = inodeOf(fdOf(accepted[0]));
      assert.equal(unixPeerOf(clientIno), serverEndIno, "the client's peer is the accepted socket");
      assert.equal(unixPeerOf(serverEndIno), clientIno, "and the accepted socket's is the client's");
      assert.equal(unixPeerOf(inodeOf(fdOf(server))), null, 'a listener has no peer');
      // Inodes that cannot be a socket's (none, negative, fractional, out of range): no answer, no throw.
      for (const bad of [0, -1, 1.5, 2 ** 40, Number.NaN]) assert.equal(unixPeerOf(bad), null, String(bad));
      client.destroy();
      await new Promise((r) => accepted[0].once('close', r));
      assert.equal(unixPeerOf(clientIno), null, 'closed: gone');
    } finally {
      client.destroy();
      for (const s of accepted) s.destroy();
      await new Promise((r) => server.close(r));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
