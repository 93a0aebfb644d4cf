// docs/guarantees.md#events-instead-of-polling: a tool call that gives a progressToken gets notifications/progress at least every
// 5 s until it returns, so an agent whose client resets its timeout on progress never hits it.
// Driven by the official SDK client, as an agent would, over both transports at once: stdio
// (`shared-pty mcp`, relaying to the host through its control socket) and `/mcp` (where such a
// call must be answered as an event stream: plain JSON cannot carry notifications).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { bashEnv, buildCli, CLI, REPO_ROOT } from '../../../helpers/protocol';
import { startHttpHost, type HttpHost } from '../../../helpers/http';
import { BASH, connect, until, withTimeout, clientsClosed } from '../../../helpers/host';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** The client's request timeout: shorter than the command, so only progress can keep the call alive. */
const REQUEST_TIMEOUT_MS = 10_000;
/** The command outlasts the timeout (by more than one 5 s progress interval of docs/guarantees.md#events-instead-of-polling). */
const COMMAND_SECONDS = 12;

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('MCP progress keeps a long tool call alive', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  const clients: Client[] = [];

  before(async () => {
    buildCli();
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    ctl?.close();
    await h?.close();
  });

  async function openBash(): Promise<string> {
    const info = await ctl.request<any>('session/create', { ...BASH, cols: 80, rows: 24 });
    await until(async () => (await ctl.request<any>('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
    return info.id;
  }

  /** `send` of a command longer than the request timeout; resolves with its result and the progress seen. */
  async function longSend(client: Client, session: string): Promise<{ result: any; progress: number[] }> {
    const progress: number[] = [];
    const result = await client.callTool({ name: 'send', arguments: { session, text: `sleep ${COMMAND_SECONDS}; echo slept`, timeout: 30_000 } }, undefined, {
      timeout: REQUEST_TIMEOUT_MS,
      resetTimeoutOnProgress: true,
      onprogress: (p) => progress.push(p.progress),
    });
    return { result, progress };
  }

  test(`a ${COMMAND_SECONDS} s send with a ${REQUEST_TIMEOUT_MS / 1000} s request timeout succeeds over stdio and over /mcp`, { timeout: 90_000 }, async () => {
    const stdio = new Client({ name: 'progress-stdio', version: '0.0.0' });
    const overStdio = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: bashEnv({ SHARED_PTY_DIR: h.dir }) as Record<string, string>,
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    const http = new Client({ name: 'progress-http', version: '0.0.0' });
    const overHttp = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token}` } } });
    clients.push(stdio, http);
    await withTimeout(Promise.all([stdio.connect(overStdio), http.connect(overHttp)]), 30_000, 'MCP connect');
    const [a, b] = await Promise.all([openBash(), openBash()]);

    const [viaStdio, viaHttp] = await Promise.all([longSend(stdio, a), longSend(http, b)]);
    for (const [name, r] of [
      ['stdio', viaStdio],
      ['/mcp', viaHttp],
    ] as const) {
      assert.notEqual(r.result.isError, true, `${name}: ${JSON.stringify(r.result.content)}`);
      assert.equal(r.result.structuredContent.waitReason, 'stdin_read', name);
      assert.ok(r.result.structuredContent.output.split('\n').includes('slept'), `${name}: ${r.result.structuredContent.output}`);
      assert.ok(r.progress.length >= 2, `${name}: progress notifications kept the call alive (${r.progress.length})`);
      assert.deepEqual(
        [...r.progress].sort((x, y) => x - y),
        r.progress,
        `${name}: progress only grows`,
      );
    }
  });
});
