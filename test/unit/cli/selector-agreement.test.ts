// One selector, one meaning (docs/hosts.md#session-selectors): the host's registry, the CLI's findSession and stdio MCP's
// routing (DiscoveryBackend) resolve selectors alike, against two real hosts in one runtime
// directory that both have a session named "dup".
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { RpcError } from '../../../src/core/base/errors';
import { resolveSelector } from '../../../src/core/session/selector';
import type { Session } from '../../../src/core/session/session';
import { Host } from '../../../src/host/host';
import { CliError, findSession } from '../../../src/cli/find-session';
import { DiscoveryBackend } from '../../../src/cli/mcp';
import { BASH, tempRuntimeDir } from '../../helpers/host';
import { CLI } from '../../helpers/protocol';
import { ensureNoDisposablesAreLeakedBySuite } from '../../helpers/leak-tracker';

/** What a surface made of a selector: the session's id, or why not. */
type Outcome = string | 'unknown' | 'ambiguous';

let dir: string;
let hostA: Host;
let hostB: Host;
let a1: Session;
let a2: Session;
let b1: Session;
const previousDir = process.env.SHARED_PTY_DIR;

before(async () => {
  dir = tempRuntimeDir();
  // findSession and DiscoveryBackend find hosts through the runtime directory, as the CLI does.
  process.env.SHARED_PTY_DIR = dir;
  hostA = await Host.start({ kind: 'serve', runtimeDir: dir });
  hostB = await Host.start({ kind: 'serve', runtimeDir: dir });
  a1 = await hostA.createSession({ ...BASH, name: 'dup' });
  a2 = await hostA.createSession({ ...BASH, name: 'solo' });
  b1 = await hostB.createSession({ ...BASH, name: 'dup' });
});

after(async () => {
  await Promise.all([hostA?.close(), hostB?.close()]);
  if (previousDir === undefined) delete process.env.SHARED_PTY_DIR;
  else process.env.SHARED_PTY_DIR = previousDir;
  fs.rmSync(dir, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

function fromRpcError(e: unknown, selector: string): Outcome {
  assert.ok(e instanceof RpcError, String(e));
  assert.equal(e.code, -32001);
  assert.deepEqual(e.data, { session: selector });
  return /ambiguous/i.test(e.message) ? 'ambiguous' : 'unknown';
}

function viaRegistry(host: Host, selector: string): Outcome {
  try {
    return host.registry.resolve(selector).id;
  } catch (e) {
    return fromRpcError(e, selector);
  }
}

function viaCli(selector: string): Outcome {
  try {
    return findSession(selector).session.id;
  } catch (e) {
    assert.ok(e instanceof CliError, String(e));
    if (/ is ambiguous: it may be .*; give an id, or an id prefix only one of them has$/.test(e.message)) return 'ambiguous';
    assert.match(e.message, /^unknown session: /);
    return 'unknown';
  }
}

async function viaMcp(selector: string): Promise<Outcome> {
  const backend = new DiscoveryBackend(CLI);
  try {
    return ((await backend.call('pty/info', { session: selector })) as { id: string }).id;
  } catch (e) {
    return fromRpcError(e, selector);
  } finally {
    backend.dispose();
  }
}

/** What the one rule says, over the sessions a surface sees. */
function expected(sessions: Array<{ id: string; name: string }>, selector: string): Outcome {
  const r = resolveSelector(
    sessions,
    selector,
    (s) => s.id,
    (s) => s.name,
  );
  return r.kind === 'found' ? r.item.id : r.kind;
}

/** The shortest prefix of `id` that no other session id starts with. */
function uniquePrefix(id: string, others: string[]): string {
  for (let n = 1; ; n++) if (!others.some((o) => o !== id && o.startsWith(id.slice(0, n)))) return id.slice(0, n);
}

test('registry, CLI and stdio MCP agree on ids, names, prefixes, duplicates across hosts and the empty selector', { timeout: 60_000 }, async () => {
  const everyone = [a1, a2, b1].map((s) => ({ id: s.id, name: s.name }));
  const ids = everyone.map((s) => s.id);
  const cases: Array<[string, Outcome, Outcome]> = [
    // selector, across both hosts (CLI, MCP), on host A alone (its registry)
    [a1.id, a1.id, a1.id],
    [uniquePrefix(b1.id, ids), b1.id, expected([a1, a2], uniquePrefix(b1.id, ids))],
    ['solo', a2.id, a2.id],
    ['dup', 'ambiguous', a1.id],
    ['', 'unknown', 'unknown'],
    ['nosuch', 'unknown', 'unknown'],
  ];
  for (const [selector, acrossHosts, onA] of cases) {
    const what = JSON.stringify(selector);
    assert.equal(expected(everyone, selector), acrossHosts, `the rule, ${what}`);
    assert.equal(viaCli(selector), acrossHosts, `CLI, ${what}`);
    assert.equal(await viaMcp(selector), acrossHosts, `MCP, ${what}`);
    assert.equal(viaRegistry(hostA, selector), onA, `registry, ${what}`);
  }
});

test('two sessions of one name on one host: the registry too says ambiguous, as CLI and MCP do', { timeout: 60_000 }, async () => {
  a2.name = 'dup'; // only in-process: the protocol refuses a second session of a name
  hostA.writeRecordNow();
  try {
    assert.equal(viaRegistry(hostA, 'dup'), 'ambiguous');
    assert.equal(viaCli('dup'), 'ambiguous');
    assert.equal(await viaMcp('dup'), 'ambiguous');
  } finally {
    a2.name = 'solo';
    hostA.writeRecordNow();
  }
});
