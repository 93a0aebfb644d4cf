// A browser MCP client on `/mcp` (docs/guarantees.md#cors, docs/protocol.md#6-mcp): a page of an allowed origin (`serve
// --allow-origin`) in Debian's Chromium runs the official SDK's Client over its browser transport
// (StreamableHTTPClientTransport, bundled for the page with esbuild here) against a real host.
/// <reference lib="dom" />
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as esbuild from 'esbuild';
import type { Browser } from 'playwright-core';
import { startServeHost, type ServeHost } from '../helpers/cli';
import { tempRuntimeDir } from '../helpers/host';
import { bashEnv, freePort } from '../helpers/protocol';
import { chromiumSkip, launchChromium } from '../helpers/chromium';

const ROOT = path.join(__dirname, '..', '..');
const skip = chromiumSkip('the browser MCP client test');

/** Bound on the page's whole MCP exchange; generous for a loaded machine, finite so a hang fails. */
const PAGE_WAIT_MS = 60_000;

/** What the page's client did, as it reports it back. */
interface PageResult {
  tools: string[];
  listText: string;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  terminated: boolean;
}

/** The page's script: connect, list the tools, call one, end the MCP session (a DELETE when it has one). */
const PAGE_SCRIPT = `
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
window.runMcp = async (url, token) => {
  const client = new Client({ name: 'browser-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer ' + token } } });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const listed = await client.callTool({ name: 'list_sessions', arguments: {} });
  const sessionId = transport.sessionId;
  const protocolVersion = transport.protocolVersion;
  await transport.terminateSession();
  await client.close();
  return { tools, listText: listed.content[0].text, sessionId, protocolVersion, terminated: transport.sessionId === undefined };
};
`;

describe('a browser MCP client from an allowed origin', { timeout: 120_000 }, () => {
  let serve: ServeHost;
  let pages: http.Server;
  let origin: string;
  let browser: Browser;

  before(async () => {
    const bundle = await esbuild.build({
      stdin: { contents: PAGE_SCRIPT, resolveDir: ROOT, loader: 'js' },
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'iife',
      target: 'es2022',
      logLevel: 'warning',
    });
    const js = bundle.outputFiles[0].text;
    // The page's own server: another port is another origin, as a web app's would be.
    pages = http.createServer((req, res) => {
      if (req.url === '/client.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>mcp</title><script src="/client.js"></script>');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    origin = `http://localhost:${(pages.address() as AddressInfo).port}`;
    const dir = tempRuntimeDir();
    serve = await startServeHost(
      ['--cmd', 'bash --norc --noprofile', '--name', 'web', '--http-port', String(await freePort()), '--allow-origin', origin],
      bashEnv({ SHARED_PTY_DIR: dir }),
    );
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    await new Promise((resolve) => pages?.close(resolve));
  });

  it("connects, lists the tools, calls one and ends its MCP session with the SDK's browser transport", { skip }, async () => {
    const page = await browser.newPage();
    const failed: string[] = [];
    // (The SDK's optional GET stream is answered 405, which the transport expects: not an error here.)
    page.on('console', (m) => {
      if (m.type() === 'error' && /CORS|Access-Control/i.test(m.text())) failed.push(m.text());
    });
    await page.goto(`${origin}/`);
    const hostHttp = serve.record.http;
    assert.ok(hostHttp, 'the host serves HTTP');
    const result = (await page.evaluate(
      ([url, token, ms]) =>
        Promise.race([
          (window as unknown as { runMcp(u: string, t: string): Promise<unknown> }).runMcp(url, token),
          new Promise((_, reject) => setTimeout(() => reject(new Error('no answer from the MCP exchange')), ms)),
        ]),
      [`${hostHttp.url}/mcp`, hostHttp.token, PAGE_WAIT_MS] as const,
    )) as PageResult;
    assert.deepEqual(failed, [], 'no CORS error in the page');
    assert.ok(result.tools.includes('send') && result.tools.includes('list_sessions'), `the tools: ${result.tools.join(', ')}`);
    assert.match(result.listText, /\bweb\b/, "list_sessions answered with the host's session");
    // Every request after initialize carries mcp-protocol-version: without the preflight's leave, listTools fails.
    assert.ok(result.protocolVersion, 'the client negotiated a protocol version and sent it on');
    // /mcp is stateless today (no mcp-session-id); a session id, when sent, is exposed (the next test).
    assert.equal(result.terminated, true, 'the transport ended without a session left open');
    await page.close();
  });

  it('answers a preflight for /mcp with the MCP headers allowed and mcp-session-id exposed', { skip }, async () => {
    const hostHttp = serve.record.http!;
    const u = new URL(`${hostHttp.url}/mcp`);
    const pre = await fetch(u, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id',
      },
    });
    assert.equal(pre.status, 204);
    const allowed = (pre.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const h of ['authorization', 'content-type', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'])
      assert.ok(allowed.includes(h), `preflight allows ${h}: ${allowed}`);
    const real = await fetch(u, {
      method: 'POST',
      headers: { origin, authorization: `Bearer ${hostHttp.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    await real.text();
    assert.equal(real.headers.get('access-control-allow-origin'), origin);
    assert.match(real.headers.get('access-control-expose-headers') ?? '', /mcp-session-id/i);
  });
});
