// docs/protocol.md#typing-arbitration, at the core: an agent's write waits while the user types (a
// key in the last 1.5 s, or a line they started and have not submitted). What counts as such a
// line, and the one write it does not hold: the agent's Ctrl+C, which clears it. A real bash with
// its integration in a real host; the user types as their views do (`origin: "user"`), the agent's
// writes go through admitWrite as every agent surface's do.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { startHost, TEST_WRITER, until } from '../../../helpers/host';
import { promptedShell } from '../../../helpers/shell-home';
import { admitWrite } from '../../../../src/core/agent/agent-write';
import { HUMAN_PAUSE_MS, whenHumanPaused } from '../../../../src/core/agent/typing-arbitration';
import type { InputSource } from '../../../../src/core/session/input/input-source';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** The user's keys, as the editor's terminal and `attach` send them. */
const USER: InputSource = { origin: 'user', transport: 'control' };
/** An agent's call, as `shared-pty mcp` relays it. */
const AGENT: InputSource = { origin: 'agent', transport: 'mcp-stdio' };
/** An agent's write with a timeout of its own (a `send`): the approval and the user's pause within it. */
const within = (ms: number) => ({ askMs: ms, pauseMs: ms });

const hostP = startHost();
const homes: string[] = [];

after(async () => {
  await (await hostP).close();
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

/** A bash with its integration (it tells when a command ends), at its first prompt `my> `. */
async function openBash() {
  const { host } = await hostP;
  const { home, ...how } = promptedShell('bash');
  homes.push(home);
  const s = await host.createSession({ ...how, args: [], cols: 80, rows: 24 });
  const screen = async () => (await s.mirror.screen()).rows.join('\n').trimEnd();
  await until(async () => (await screen()).endsWith('my>'), 15_000, 'the first prompt');
  assert.equal(s.integration, true, 'an interactive bash is integrated');
  /** The agent's line, admitted, written, and run. */
  const agentRuns = async (word: string) => {
    const { from } = await admitWrite({}, s, AGENT, `echo ${word}\r`, within(5000));
    s.write(`echo ${word}\r`, from);
    await until(async () => (await screen()).includes(`\n${word}\n`), 10_000, `the agent's echo ${word}`);
  };
  return { s, screen, agentRuns, close: () => host.registry.remove(s.id) };
}

// Found by an outside audit: the user typed `x` while `sleep 2` ran and erased it at the prompt;
// the line was still one they had started, for good, and every agent write was refused.
test('a line the user typed ahead of a command and erased at the prompt holds the agent no longer', { timeout: 30_000 }, async () => {
  const { s, screen, agentRuns, close } = await openBash();
  try {
    s.write('sleep 1\r', TEST_WRITER);
    await until(() => s.commands.running, 10_000, 'the command to run');
    s.write('x', USER);
    await until(async () => (await screen()).endsWith('my> x'), 10_000, 'the x typed ahead, at the next prompt');
    assert.equal(s.humanInput.lineStarted, true, 'a line the user started');
    s.write('\x7f', USER);
    await until(async () => (await screen()).endsWith('my>'), 10_000, 'the x erased');
    assert.equal(s.humanInput.lineStarted, false, 'the line is empty again');
    assert.equal(s.typedLine.empty, true, 'and known to be');
    // The user's pause still counts; then the agent's line goes through.
    await agentRuns('three');
  } finally {
    close();
  }
});

// Found by an outside audit: the agent told to send Ctrl+C to clear a line was refused as typing
// over it, after 15 s. Ctrl+C types nothing into the line: it abandons it, whoever sends it.
test("an agent's Ctrl+C waits for the user's pause, not for their line, and clears it; any other write is still held", { timeout: 30_000 }, async () => {
  const { s, screen, agentRuns, close } = await openBash();
  try {
    s.write('echo half-typed', USER);
    await until(async () => (await screen()).endsWith('my> echo half-typed'), 10_000, "the user's line");
    await assert.rejects(
      async () => admitWrite({}, s, AGENT, 'echo agent-ran\r', within(300)),
      (e: Error) => {
        assert.match(e.message, /user is typing .*\(a line they have not submitted yet\); nothing was written\..*send_keys Ctrl\+C/);
        return true;
      },
    );
    const { from } = await admitWrite({}, s, AGENT, '\x03', within(5000));
    assert.ok(Date.now() - s.humanInput.lastAt >= HUMAN_PAUSE_MS, "it waited for the user's pause");
    // Written as `send_keys` with `wait` writes it: the guard checks again in the same turn.
    await whenHumanPaused(s, from, Date.now() + 1000, undefined, async (guard) => {
      guard();
      s.write('\x03', from);
    });
    await until(async () => (await screen()).endsWith('my> echo half-typed^C\nmy>'), 10_000, 'the line abandoned');
    assert.equal(s.humanInput.lineStarted, false);
    await agentRuns('after-clear');
    assert.doesNotMatch(await screen(), /agent-ran/, 'nothing held was written');
  } finally {
    close();
  }
});
