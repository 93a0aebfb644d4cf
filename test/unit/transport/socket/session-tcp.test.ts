// Issue 21 item 3: the per-session TCP port (`--session-tcp`, `sharedPty.sessionTcp`, `serve --port`)
// runs JSON-RPC only. Any web page can make the browser send an HTTP request to a loopback port; a
// JSON-RPC line in its body used to be run (it typed a command). Now a connection whose first line
// is not a JSON-RPC message is answered with one error line and closed, and nothing in it is acted
// on; a JSON-RPC client over TCP works as before.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { parseAddress } from '../../../../src/transport/base/address';
import { BASH, startHost } from '../../../helpers/host';
import { LineClient } from '../../../helpers/protocol';
import { chromiumSkip, launchChromium } from '../../../helpers/chromium';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const TEST_TIMEOUT = 60_000;
const INVALID_REQUEST = -32600;
/** What a first line that is not JSON at all gets, as socket-pty answers invalid JSON. */
const PARSE_ERROR = -32700;

let h: Awaited<ReturnType<typeof startHost>>;
let port: number;
/** A JSON-RPC client on the TCP port: the screen checks and the proof that the port still works. */
let client: LineClient;

before(async () => {
  h = await startHost({ sessionTcp: true });
  const session = await h.host.createSession({ ...BASH });
  const tcp = h.host.describe(session).tcp;
  assert.ok(tcp, 'the session has a TCP address');
  const ep = parseAddress(tcp);
  assert.equal(ep.type, 'tcp');
  port = ep.type === 'tcp' ? ep.port : 0;
  client = await LineClient.connect({ port });
  // The screen's rows end without their trailing spaces: the prompt is `$`.
  assert.equal((await client.result('pty/wait', { match: '$', timeout: 10_000 })).matched, true);
});

after(async () => {
  client?.close();
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

/** The line a hostile request tries to run: it would print `PWNED-42` on the screen. */
function attackLine(id: number, tag: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'pty/write', params: { action: { text: `echo ${tag}-$((6*7))\n` } } });
}

/**
 * Types a probe through the JSON-RPC client and waits for its output: input is taken in order, so
 * whatever a refused connection would have typed would be on the screen by then.
 */
async function screenAfterProbe(probe: string): Promise<string> {
  await client.result('pty/write', { action: { text: `echo ${probe}-$((1+1))\n` } });
  const waited = await client.result('pty/wait', { match: `${probe}-2`, timeout: 10_000 });
  assert.equal(waited.matched, true, 'the probe ran');
  return JSON.stringify(await client.result('pty/read', {}));
}

/** Sends `bytes` on a raw connection and resolves with everything the host sent back before it closed. */
function sendRaw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe('the per-session TCP port runs JSON-RPC only', () => {
  test('a raw HTTP POST carrying a JSON-RPC line in its body types nothing; it gets one error line and is closed', { timeout: TEST_TIMEOUT }, async () => {
    const body = `\n${attackLine(7, 'PWNED')}\n`;
    const request = `POST / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUser-Agent: curl/8.0\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const answer = await sendRaw(request); // resolves once the host closed the connection
    const lines = answer.split('\n').filter((l) => l.trim() !== '');
    assert.equal(lines.length, 1, answer);
    const error = JSON.parse(lines[0]);
    assert.equal(error.id, null);
    assert.equal(error.error.code, PARSE_ERROR);
    assert.match(error.error.message, /^Parse error: .*first line was not a JSON-RPC message/);
    assert.doesNotMatch(await screenAfterProbe('after-post'), /PWNED-42/, 'nothing of the request was typed');
  });

  test(
    'curl, as the issue ran it, types nothing',
    { timeout: TEST_TIMEOUT, skip: spawnSync('curl', ['--version']).status !== 0 && 'curl is not installed' },
    async () => {
      // Run without blocking: the host answers from this very process.
      const status = await new Promise<number>((resolve) => {
        const args = ['-sS', '--max-time', '20', '-X', 'POST', '--data-binary', `\n${attackLine(8, 'CURLED')}\n`, `http://127.0.0.1:${port}/`];
        execFile('curl', args, (e) => resolve(e ? Number(e.code ?? 1) : 0));
      });
      assert.notEqual(status, 0, 'curl got no HTTP answer');
      assert.doesNotMatch(await screenAfterProbe('after-curl'), /CURLED-42/);
    },
  );

  test(
    'a first line that is a Host: header, a batch, or any text that is not a JSON-RPC object, is refused before anything after it runs (-32700 when it is not JSON, -32600 when it is)',
    { timeout: TEST_TIMEOUT },
    async () => {
      // Each with the id its answer carries: the line's own when it has a request's kind of id, as
      // on a Unix socket (id null when it cannot be read).
      const firsts: Array<[string, number, (string | number | null)?]> = [
        [`Host: 127.0.0.1:${port}`, PARSE_ERROR],
        ['GET / HTTP/1.1', PARSE_ERROR],
        ['not json', PARSE_ERROR],
        // Other JSON is refused as on later lines, once its line is whole: a batch is not taken.
        ['[{"jsonrpc":"2.0","id":1,"method":"pty/status"}]', INVALID_REQUEST],
        ['["jsonrpc"]', INVALID_REQUEST],
        ['[not json', PARSE_ERROR],
        ['{"method":"pty/write"}', INVALID_REQUEST],
        // JSON-RPC's shape, but no request: not served either.
        ['{"jsonrpc":"2.0","id":5,"params":{}}', INVALID_REQUEST, 5],
        ['{"jsonrpc":"1.0","id":1,"method":"pty/status"}', INVALID_REQUEST, 1],
        ['{"jsonrpc":"2.0","id":"s","method":5}', INVALID_REQUEST, 's'],
        ['"jsonrpc"', INVALID_REQUEST],
        ['null', INVALID_REQUEST],
        ['nothing', PARSE_ERROR],
        ['{"jsonrpc":"2.0"', PARSE_ERROR],
        ['\u0000', PARSE_ERROR],
      ];
      for (const [i, [first, code, id = null]] of firsts.entries()) {
        const answer = await sendRaw(`${first}\r\n${attackLine(10 + i, `FIRST${i}`)}\n`);
        assert.equal(JSON.parse(answer.trim()).error.code, code, `${JSON.stringify(first)}: ${answer}`);
        assert.equal(JSON.parse(answer.trim()).id, id, `${JSON.stringify(first)}: its id, ${answer}`);
      }
      // An id past what a double holds comes back as written.
      const big = await sendRaw(`{"jsonrpc":"1.0","id":9007199254740993,"method":"pty/status"}\n${attackLine(40, 'FIRSTBIG')}\n`);
      assert.match(big, /"id":9007199254740993[,}]/);
      const screen = await screenAfterProbe('after-firsts');
      assert.doesNotMatch(screen, /FIRST(\d+|BIG)-42/);
    },
  );

  test("`serve --port`'s single-session port refuses an HTTP request the same way", { timeout: TEST_TIMEOUT }, async () => {
    const compat = await h.host.createSession({ command: 'cat' }, { type: 'tcp', host: '127.0.0.1', port: 0 });
    try {
      const ep = parseAddress(h.host.describe(compat).address);
      assert.equal(ep.type, 'tcp');
      const compatPort = ep.type === 'tcp' ? ep.port : 0;
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(compatPort, '127.0.0.1');
        let text = '';
        socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
        socket.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1:${compatPort}\r\n\r\n${attackLine(11, 'COMPAT')}\n`);
      });
      assert.equal(JSON.parse(answer.trim()).error.code, PARSE_ERROR);
      assert.equal(compat.running, true);
    } finally {
      h.host.registry.remove(compat.id);
    }
  });

  test(
    'a JSON-RPC client over TCP works as before: blank lines first, CRLF, a message split over writes, several per write, a byte order mark',
    { timeout: TEST_TIMEOUT },
    async () => {
      const c = await LineClient.connect({ port });
      try {
        const status = c.next((m) => m.id === 'a', undefined, 'the answer to the split request');
        c.raw('\r\n\n{"jsonrpc":"2.0","id":"a",');
        c.raw('"method":"pty/status"}\r\n');
        assert.equal((await status).result.running, true);
        const both = Promise.all([c.next((m) => m.id === 'b'), c.next((m) => m.id === 'c')]);
        c.raw('{"jsonrpc":"2.0","id":"b","method":"pty/status"}\n{"jsonrpc":"2.0","id":"c","method":"pty/info"}\n');
        const [b, cc] = await both;
        assert.equal(b.result.running, true);
        assert.equal(typeof cc.result.id, 'string');
        // After the first message, a bad line is an ordinary parse error on a connection that goes on.
        const bad = c.next((m) => m.id === null);
        c.raw('not json\n');
        assert.equal((await bad).error.code, -32700);
        assert.equal((await c.result('pty/status', {})).running, true);
        assert.equal(c.isClosed, false);
      } finally {
        c.close();
      }
      // A first line that begins with UTF-8's byte order mark is served, as on a Unix socket.
      const bom = await LineClient.connect({ port });
      try {
        const answer = bom.next((m) => m.id === 'bom', undefined, 'the answer to a line with a BOM');
        bom.raw('\ufeff{"jsonrpc":"2.0","id":"bom","method":"pty/status"}\n');
        assert.equal((await answer).result.running, true);
      } finally {
        bom.close();
      }
    },
  );

  test(
    'a web page\'s fetch(…, {mode: "no-cors"}) in a real Chromium types nothing',
    { timeout: TEST_TIMEOUT, skip: chromiumSkip('the browser attack') },
    async () => {
      // A hostile local web server (another port of 127.0.0.1) serves the page.
      const page = `<!doctype html><script>
      fetch('http://127.0.0.1:${port}/', { method: 'POST', mode: 'no-cors', body: ${JSON.stringify(`\n${attackLine(9, 'BROWSER')}\n`)} })
        .then(() => (document.title = 'sent'), () => (document.title = 'sent'));
    </script>`;
      const site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page));
      await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
      const browser = await launchChromium();
      try {
        const tab = await browser.newPage();
        await tab.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
        await tab.waitForFunction(() => document.title === 'sent', undefined, { timeout: 20_000 });
        assert.doesNotMatch(await screenAfterProbe('after-browser'), /BROWSER-42/);
      } finally {
        await browser.close();
        site.close();
      }
    },
  );
});
