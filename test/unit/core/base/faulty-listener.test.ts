// A faulty listener must not end the host (issue 11): its error is isolated and logged, the other
// listeners still get the event, and the session and host go on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { Emitter } from '../../../../src/core/base/lifecycle';
import { setUnexpectedErrorHandler } from '../../../../src/core/base/unexpected-error';
import { REPO_ROOT } from '../../../helpers/protocol';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

const FIXTURE = path.join(__dirname, 'faulty-listener.fixture.ts');

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

test('a listener that throws does not stop the others; its error goes to the unexpected-error handler', () => {
  const errors: unknown[] = [];
  const previous = setUnexpectedErrorHandler((e) => errors.push(e));
  const emitter = new Emitter<number>();
  try {
    const got: number[] = [];
    emitter.event(() => {
      throw new Error('boom');
    });
    emitter.event((n) => got.push(n));
    emitter.fire(1);
    emitter.fire(2);
    assert.deepEqual(got, [1, 2]);
    assert.deepEqual(
      errors.map((e) => (e as Error).message),
      ['boom', 'boom'],
    );
  } finally {
    emitter.dispose();
    setUnexpectedErrorHandler(previous);
  }
});

test('a real host survives a listener that throws on its session output, and logs one line per error', { timeout: 60_000 }, async () => {
  // This process's TypeScript loader (tsx, or npm test's compiled files: scripts/ts-require.cjs).
  const child = spawn(process.execPath, [...process.execArgv, FIXTURE], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  assert.equal(code, 0, `the host process ended: exit ${code}; stderr: ${stderr}`);
  const result = JSON.parse(stdout.trim()) as { delivered: number; running: boolean };
  assert.ok(result.delivered > 0, 'the other listener got the output');
  assert.equal(result.running, true, 'the session still runs');
  const lines = stderr.split('\n').filter((l) => l.includes('faulty listener on purpose'));
  assert.ok(lines.length > 0, `the error is logged: ${stderr}`);
  for (const line of lines) {
    // Message and stack on one line: the per-user host's daemon.log keeps one entry per line.
    assert.match(line, /^shared-pty: unexpected error .*Error: faulty listener on purpose \| at .*faulty-listener\.fixture\.ts/);
  }
});
