// The official MCP conformance suite (@modelcontextprotocol/conformance) against a real host's
// /mcp, once for each protocol revision we serve, each run exactly what that revision requires
// (`--requirements`, at that revision's wire version: 2025-11-25 with initialize, 2026-07-28
// stateless). Every scenario that applies to our server passes; those that do not are listed, one
// reason each, in mcp-conformance.<revision>.expected.yaml, and the suite itself fails on a
// regression or on a listed scenario that passes. It needs Node >= 22: the e2e sandbox's Node 24
// (scripts/sandbox.mjs).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startHttpHost, type HttpHost } from '../../../helpers/http';
import { startTokenShim, type TokenShim } from '../../../helpers/token-shim';
import { REPO_ROOT } from '../../../helpers/protocol';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const SUITE = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
/** The protocol revisions the suite runs for, each with the scenarios that do not apply to it. */
const REVISIONS = ['2025-11-25', '2026-07-28'] as const;
const expectedFile = (revision: string) => path.join(__dirname, `mcp-conformance.${revision}.expected.yaml`);
/** Scenarios each revision's run must pass, by name (a run that skipped them would pass vacuously). */
const SERVED: Record<(typeof REVISIONS)[number], string[]> = {
  '2025-11-25': ['server-initialize', 'logging-set-level', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection', 'server-sse-multiple-streams'],
  '2026-07-28': [
    'tools-list',
    'resources-list',
    'dns-rebinding-protection',
    'http-header-validation',
    'sep-2164-resource-not-found',
    'input-required-result-unsupported-methods',
  ],
};
/**
 * Scenarios listed as not applying whose checks fail only where they call the suite's own tools:
 * at most this many of their checks fail (server-stateless: no initialize, no session, methods the
 * revision removed answered 404 -32601, all pass but the four that need the suite's own diagnostic
 * tools test_missing_capability, test_streaming_elicitation and test_logging_tool, "not testable").
 */
const FAILING_AT_MOST: Record<(typeof REVISIONS)[number], Record<string, number>> = {
  '2025-11-25': {},
  '2026-07-28': { 'server-stateless': 4, caching: 1 },
};
/**
 * The Tasks extension's scenarios (2026-07-28; the suite runs them for visibility, unscored): each
 * drives the suite's own fixture tools (greet, slow_compute, confirm_delete, failing_job,
 * multi_input, test_tool_with_task), so none applies whole. These checks of theirs need no
 * fixture and must pass, each by scenario; every message of every Tasks scenario must also be
 * valid per the specification's schema (wire-schema-valid).
 */
const TASKS_CHECKS: Record<string, string[]> = {
  'tasks-capability-negotiation': ['tasks-extension-advertised', 'sep-2663-tasks-methods-non-declaring'],
  'tasks-dispatch-and-envelope': ['sep-2663-tasks-result-removed-method-not-found', 'tasks-removed-tasks-list', 'sep-2663-tasks-get-invalid-task-id-32602'],
  'tasks-request-headers': ['tasks-headers-reject-mismatched-method'],
  'tasks-lifecycle': [],
  'tasks-wire-fields': [],
  'tasks-request-state-removal': [],
  'tasks-mrtr-input': [],
  'tasks-required-task-error': [],
  'tasks-mrtr-composition': [],
};

/** The checks one scenario's run recorded (the suite writes them to server-<scenario>-<time>/checks.json). */
function checksOf(runDir: string, scenario: string): Array<{ id: string; status: string; errorMessage?: string }> {
  const dir = fs.readdirSync(runDir).find((d) => d.startsWith(`server-${scenario}-`));
  assert.ok(dir, `${scenario} ran`);
  return JSON.parse(fs.readFileSync(path.join(runDir, dir, 'checks.json'), 'utf8'));
}

/** Bound on the whole suite (it takes a few seconds; a hung scenario must fail, not block). */
const SUITE_TIMEOUT_MS = 120_000;

async function node24(): Promise<string | undefined> {
  const specifier: string = path.join(REPO_ROOT, 'scripts', 'sandbox.mjs');
  const { sandboxNode24 } = (await import(specifier)) as { sandboxNode24(): string };
  const bin = sandboxNode24();
  return fs.existsSync(bin) ? bin : undefined;
}

/** Runs the suite's server mode; its exit status and everything it printed. */
function runSuite(node: string, url: string, revision: string, outDir: string): Promise<{ code: number | string; output: string }> {
  return new Promise((resolve, reject) => {
    const args = [SUITE, 'server', '--url', url, '--requirements', revision, '--expected-failures', expectedFile(revision), '-o', outDir];
    const child = spawn(node, args, { cwd: outDir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), SUITE_TIMEOUT_MS);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? 'unknown', output });
    });
  });
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

describe('the MCP conformance suite against /mcp', async () => {
  const node = await node24();
  const skip = node ? false : "the e2e sandbox's Node 24 is not installed (node scripts/sandbox.mjs install); the conformance suite needs Node >= 22";
  let h: HttpHost;
  let shim: TokenShim;
  let outDir: string;

  before(async () => {
    if (skip) return;
    h = await startHttpHost();
    // The suite's client sends no token: the shim adds it, as a client configured with it would.
    shim = await startTokenShim(h.port, h.token);
    outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-conformance-'));
  });

  after(async () => {
    await shim?.close();
    await h?.close();
    if (outDir) fs.rmSync(outDir, { recursive: true, force: true });
  });

  for (const revision of REVISIONS) {
    test(
      `${revision}: every scenario that applies passes; the expected failures are exactly those listed`,
      { skip, timeout: SUITE_TIMEOUT_MS + 10_000 },
      async () => {
        const runDir = fs.mkdtempSync(path.join(outDir, `${revision}-`));
        const { code, output } = await runSuite(node!, `${shim.url}/mcp`, revision, runDir);
        const summary = output.slice(output.lastIndexOf('=== SUMMARY ==='));
        assert.equal(code, 0, `the conformance suite failed:\n${summary || output}`);
        // The scenarios we do serve, by name: a suite that skipped them would pass vacuously.
        for (const name of SERVED[revision]) assert.match(summary, new RegExp(`✓ ${name}: [1-9]\\d* passed, 0 failed`), `${name} passes`);
        for (const [name, most] of Object.entries(FAILING_AT_MOST[revision])) {
          const counts = new RegExp(`✗ ${name}: (\\d+) passed, (\\d+) failed`).exec(summary);
          const failed = () =>
            checksOf(runDir, name)
              .filter((c) => c.status === 'FAILURE')
              .map((c) => `${c.id}: ${c.errorMessage ?? ''}`);
          assert.ok(
            counts && Number(counts[1]) > 0 && Number(counts[2]) <= most,
            `${name}: at most ${most} checks fail (${counts?.[0]}): ${counts ? failed().join('; ') : ''}`,
          );
        }
        if (revision !== '2026-07-28') return;
        for (const [scenario, ids] of Object.entries(TASKS_CHECKS)) {
          const checks = checksOf(runDir, scenario);
          for (const id of [...ids, 'wire-schema-valid']) {
            const check = checks.find((c) => c.id === id);
            assert.equal(check?.status, 'SUCCESS', `${scenario}: ${id} (${check?.errorMessage ?? 'not run'})`);
          }
        }
      },
    );
  }
});
