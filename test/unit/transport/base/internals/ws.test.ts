// The private part of ws the WebSocket endpoints need for back-pressure
// (src/transport/base/internals/ws.ts), on a real connection: a ws that reshapes it fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { socketOf } from '../../../../../src/transport/base/internals/ws';
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
