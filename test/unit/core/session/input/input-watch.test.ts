// A session follows what its program waits for without polling (docs/protocol.md#secret-input, docs/protocol.md#events-ptyevents-and-ptywaitevent): after its
// output or a submitted line has been looked at, an idle session has no timer and does no work;
// a new wait is an Enter, a busy spell or another job waiting away, not a keystroke. Real bash in a real host.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { BASH, startHost, TEST_WRITER, until } from '../../../../helpers/host';
import type { HostEvent } from '../../../../../src/core/session/events/session-events';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../../helpers/leak-tracker';

const linux = process.platform === 'linux';
const hostP = startHost();

after(async () => (await hostP).close());
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

test('an idle session settles with nothing scheduled; typing is no new wait, Enter is', { skip: !linux && 'needs Linux /proc', timeout: 30_000 }, async () => {
  const { host } = await hostP;
  const s = await host.createSession({ ...BASH, cols: 80, rows: 24 });
  const events: HostEvent[] = [];
  const sub = host.registry.events.onEvent((e) => e.session === s.id && events.push(e));
  try {
    await until(() => s.inputWatch.state === 'input' && s.inputWatch.quiet, 10_000, 'the first prompt, looked at');
    const waits = () => events.filter((e) => e.type === 'input_wait').length;
    assert.equal(waits(), 1);

    // Keys without Enter: the shell echoes them, is looked at again, and still waits for the same line.
    s.write('echo typed', TEST_WRITER);
    await until(async () => (await s.mirror.screen()).rows.some((r) => r.includes('echo typed')), 10_000, 'the echo');
    await until(() => s.inputWatch.quiet, 10_000, 'the look after the echo');
    assert.equal(waits(), 1, 'no new input_wait for keystrokes');

    s.write('\r', TEST_WRITER);
    await until(() => waits() === 2, 10_000, 'a new input_wait after Enter');
    await until(() => s.inputWatch.quiet, 10_000, 'settled again');
    assert.equal(s.secretInput, false);
  } finally {
    sub.dispose();
    host.registry.remove(s.id);
  }
});

test(
  'while the host has stopped reading for the parser (a flood), no probe is due; one follows once reading resumes',
  { skip: !linux && 'needs Linux /proc', timeout: 30_000 },
  async () => {
    const { InputWatch } = await import('../../../../../src/core/session/input/input-watch');
    let probes = 0;
    const watch = new InputWatch(async () => {
      probes++;
      return 'input_wait'; // a job found waiting: nothing more to look at
    });
    try {
      watch.hold(true);
      watch.activity();
      assert.equal(watch.quiet, false, 'a look is scheduled');
      // Ordering fence: the scheduled look has come and gone (nothing scheduled, nothing running).
      await until(() => watch.quiet, 10_000, 'the scheduled look to pass');
      assert.equal(probes, 0, 'no /proc probe while output waits to be read');
      watch.hold(false);
      await until(() => probes === 1 && watch.quiet, 10_000, 'the probe after reading resumed');
    } finally {
      watch.dispose();
    }
  },
);

test(
  "while the program's output waits unread (it prints faster than the host reads), no probe is due; one follows once it is read",
  { skip: !linux && 'needs Linux /proc', timeout: 30_000 },
  async () => {
    const { InputWatch } = await import('../../../../../src/core/session/input/input-watch');
    let probes = 0;
    let asked = 0;
    let printing = true;
    const watch = new InputWatch(
      async () => {
        probes++;
        return 'input_wait'; // a job found waiting: nothing more to look at
      },
      true,
      () => {
        asked++;
        return printing;
      },
    );
    try {
      watch.activity();
      // Ordering fence: two looks have come, each found output queued, and the watch is still looking.
      await until(() => asked >= 2, 10_000, 'two scheduled looks');
      assert.equal(probes, 0, 'no /proc probe while the program prints');
      assert.equal(watch.quiet, false, 'a further look is scheduled');
      printing = false;
      await until(() => probes === 1 && watch.quiet, 10_000, 'the probe once the output was read');
    } finally {
      watch.dispose();
    }
  },
);

test(
  'a job seen busy with nothing printed is looked at again, later each time (it may start to read without a prompt); a job seen waiting is not',
  { skip: !linux && 'needs Linux /proc', timeout: 30_000 },
  async () => {
    const { InputWatch } = await import('../../../../../src/core/session/input/input-watch');
    const at: number[] = [];
    let answer: 'busy' | 'input_wait' = 'busy';
    const watch = new InputWatch(async () => {
      at.push(Date.now());
      return answer;
    });
    try {
      watch.activity();
      await until(() => at.length === 4, 10_000, 'four looks at a silent busy job');
      const gaps = at.slice(1).map((t, i) => t - at[i]);
      // Timers never fire early: each look at least twice as late as the one before (250, 500, 1000 ms).
      [250, 500, 1000].forEach((least, i) => assert.ok(gaps[i] >= least - 5, `look ${i + 2} after ${gaps[i]} ms, at least ${least}: ${gaps.join(', ')}`));
      answer = 'input_wait';
      await until(() => watch.state === 'input' && watch.quiet, 10_000, 'the job found waiting, nothing more scheduled');
    } finally {
      watch.dispose();
    }
  },
);

// Found by an outside audit: after `cat` and Ctrl+C, `python3 -q` and Ctrl+D, `less` and `q`, the
// shell's prompt came back with no input_wait: none of those keys is Enter, and a program that
// reads is never seen busy. The wait that follows is another job's (the terminal's foreground
// process group changed), so it is a new one. The watch here is given the session's own probe and
// foreground group, and follows its output and lines as the session's does.
test(
  'a prompt that comes back after a program that read was left with a key (Ctrl+C, Ctrl+D, q) is a new wait; keys typed into it are not',
  { skip: !linux && 'needs Linux /proc', timeout: 30_000 },
  async () => {
    const { InputWatch } = await import('../../../../../src/core/session/input/input-watch');
    const { probeInputWait } = await import('../../../../../src/core/process/input-wait');
    const { foregroundProcessGroup } = await import('../../../../../src/core/process/proc-state');
    const { host } = await hostP;
    const s = await host.createSession({ ...BASH, cols: 80, rows: 24 });
    const watch = new InputWatch(
      () => probeInputWait(s.pid, () => s.secretJudge.asksNow()),
      true,
      undefined,
      () => foregroundProcessGroup(s.pid) ?? undefined,
    );
    let waits = 0;
    const subs = [
      watch.onDidChange((state) => state === 'input' && waits++),
      s.onOutput(() => watch.activity()),
      s.onInput((input) => /[\r\n]/.test(input.data) && watch.submitted()),
    ];
    const screen = async () => (await s.mirror.screen()).rows.join('\n').trimEnd();
    try {
      await until(() => waits === 1 && watch.quiet, 10_000, 'the first prompt, looked at');
      for (const [command, key, shows] of [
        ['cat', '\x03', /\$ cat$/],
        ['python3 -q', '\x04', /^>>>$/m],
        ['less /etc/passwd', 'q', /^root:/m],
      ] as const) {
        const before = waits;
        s.write(`${command}\r`, TEST_WRITER);
        await until(async () => waits === before + 1 && watch.quiet && shows.test(await screen()), 10_000, `${command} to wait for input`);
        s.write(key, TEST_WRITER);
        await until(
          async () => waits === before + 2 && (await screen()).endsWith('$'),
          10_000,
          `a new wait at the prompt after ${command} and ${JSON.stringify(key)}`,
        );
        await until(() => watch.quiet, 10_000, 'settled');
        assert.equal(waits, before + 2, `one new wait for the prompt after ${command}`);
      }
      // Keys typed into the prompt: the same job waits for the same line.
      const before = waits;
      s.write('echo typed', TEST_WRITER);
      await until(async () => (await screen()).endsWith('$ echo typed'), 10_000, 'the echo');
      await until(() => watch.quiet, 10_000, 'the look after the echo');
      assert.equal(waits, before, 'no new wait for keystrokes');
    } finally {
      subs.forEach((d) => d.dispose());
      watch.dispose();
      host.registry.remove(s.id);
    }
  },
);
