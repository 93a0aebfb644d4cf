// The private parts of ws the WebSocket endpoints need, for back-pressure and to answer a message
// over the size limit (src/transport/base/internals/ws.ts), on a real connection: a ws that
// reshapes them fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { beforeMessageTooLong, socketOf } from '../../../../../src/transport/base/internals/ws';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../../helpers/leak-tracker';

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

test('a WebSocket keeps the TCP socket under it, on both ends', async () => {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => server.once('listening', () => r()));
  const accepted = new Promise<WebSocket>((r) => server.once('connection', (ws) => r(ws)));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
  try {
    await new Promise<void>((resolve, reject) => {
      client.once('open', () => resolve());
      client.once('error', reject);
    });
    const ends = [await accepted, client];
    for (const ws of ends) {
      const socket = socketOf(ws);
      assert.ok(socket instanceof net.Socket, '_socket: the TCP socket');
    }
    assert.equal(socketOf(ends[0])!.remotePort, socketOf(client)!.localPort, 'the two ends of one connection');
  } finally {
    client.terminate();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('a message over maxPayload is heard while the WebSocket is open: what is sent then arrives before the 1009 close', async () => {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 1024 });
  await new Promise<void>((r) => server.once('listening', () => r()));
  const heard: string[] = [];
  server.once('connection', (ws) => {
    ws.on('error', () => {});
    const found = beforeMessageTooLong(ws, () => {
      heard.push(ws.readyState === ws.OPEN ? 'open' : 'not open');
      ws.send('too long');
    });
    assert.equal(found, true, '_receiver: the frame reader, an EventEmitter');
  });
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
  try {
    const received: string[] = [];
    client.on('message', (m) => received.push(m.toString()));
    await new Promise<void>((resolve, reject) => {
      client.once('open', () => resolve());
      client.once('error', reject);
    });
    client.send('x'.repeat(1024));
    client.send('y'.repeat(1025));
    const code = await new Promise<number>((r) => client.once('close', (c) => r(c)));
    assert.equal(code, 1009);
    assert.deepEqual(heard, ['open'], 'once, on the message over the limit only');
    assert.deepEqual(received, ['too long']);
  } finally {
    client.terminate();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
