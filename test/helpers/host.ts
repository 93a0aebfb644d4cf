import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Host, type HostOptions } from '../../src/host/host';
import assert from 'node:assert/strict';
import { RpcCallError, RpcClient } from '../../src/transport/client/rpc-client';

/** A private runtime directory for one test file (mode 0700, removed by the caller). */
export function tempRuntimeDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-test-'));
  fs.chmodSync(dir, 0o700);
  return dir;
}

/**
 * The plain bash most tests use: no rc files, a fixed prompt, so screens are predictable, and no
 * shell integration (which bash --norc gets too), so they see what a shell that reports nothing
 * gives: the waits that read /proc, raw output without marks. Tests of the integration open
 * their own shells (shell-integration.test.ts).
 */
export const BASH = { command: 'bash', args: ['--norc', '--noprofile', '-i'], env: { PS1: '$ ', HISTFILE: '/dev/null', SHARED_PTY_SHELL_INTEGRATION: '0' } };

/** The source a test names when it writes into a session in-process (Session.write needs one): a script. */
export const TEST_WRITER = { origin: 'script', transport: 'control' } as const;

/** Starts an in-process host in its own runtime directory. */
export async function startHost(options: Partial<HostOptions> = {}): Promise<{ host: Host; dir: string; close(): Promise<void> }> {
  const dir = tempRuntimeDir();
  const host = await Host.start({ kind: 'serve', runtimeDir: dir, ...options });
  return {
    host,
    dir,
    async close() {
      await host.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The clients `connect` made in this process whose connection has not ended yet. */
const openClients = new Set<RpcClient>();

/** Connects a JSON-RPC client to an address (remembered until its connection ends: see `clientsClosed`). */
export async function connect(address: string): Promise<RpcClient> {
  const client = await RpcClient.connect(address);
  openClients.add(client);
  client.onClose(() => openClients.delete(client));
  return client;
}

/** How long the clients may take to see their connection end once everything is closed (a noisy machine). */
const CLIENTS_CLOSED_MS = 10_000;

/**
 * Resolves once every client `connect` made has seen its connection end: the test closed it, or the
 * host that served it closed. A client's close arrives a turn after its socket ends, so a leak
 * check waits for this first (the client lets go of its emitters then); one still open after the
 * bound is a connection left behind, and fails.
 */
export async function clientsClosed(): Promise<void> {
  await until(() => openClients.size === 0, CLIENTS_CLOSED_MS, `${openClients.size} client connection(s) to end`);
}

type Falsy = undefined | null | false | 0 | '';

/** Polls `fn` until it returns a truthy value (which it resolves to) or `ms` passes. */
export async function until<T>(fn: () => T | Falsy | Promise<T | Falsy>, ms = 5000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Asserts a call fails with JSON-RPC error `code`; returns the error for further checks. */
export async function rejectsWith(p: Promise<unknown>, code: number): Promise<RpcCallError> {
  try {
    const v = await p;
    assert.fail(`expected error ${code}, got ${JSON.stringify(v)}`);
  } catch (e) {
    if (!(e instanceof RpcCallError)) throw e;
    assert.equal(e.code, code, `${e.code} ${e.message}`);
    return e;
  }
}

/** Rejects with "timed out: <what>" when `p` takes longer than `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
    }),
  ]);
}

/**
 * How many listen for a session's next output: a waiting read is one of them. Read from the
 * emitter's own list, since nothing outside the host can tell when a long-poll has begun to wait.
 */
export function outputListeners(session: object): number {
  // The emitter makes its list at the first subscription (lifecycle.ts).
  return (session as unknown as { _onOutput: { _subscriptions?: Set<unknown> } })._onOutput._subscriptions?.size ?? 0;
}
