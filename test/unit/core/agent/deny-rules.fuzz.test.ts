// Property-based fuzzing of the agent deny rules (docs/protocol.md "Agent guards"): a denied command,
// put anywhere in a list, behind any wrapper, split into writes at any points and with typing
// mistakes corrected on the way, never reaches the shell: some write of the agent is refused before
// its Enter is written. Lines without the command are never refused. In memory (TypedLine and the
// rule matching, thousands of cases), then over the wire against a real host and bash.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TypedLine } from '../../../../src/core/session/input/typed-line';
import { commandsToJudge } from '../../../../src/core/agent/command-line';
import { fuzz, fuzzSync } from '../../../helpers/fuzz';
import { connect, startHost, clientsClosed } from '../../../helpers/host';
import { agentCalls } from '../../../helpers/agent-calls';
import { RpcCallError, type RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const RULE = /^rm -rf/;

/** Where a denied `rm -rf` may stand in a line, and what may come after it. */
const before_ = fc.constantFrom('', 'echo hi; ', 'true && ', 'false || ', 'yes | ', 'sleep 0 & ', '( ', '{ ', 'if true; then ');
const wrapper = fc.constantFrom('', 'sudo ', 'sudo -u root ', 'env ', 'env FOO=1 ', 'command ', 'FOO=bar ', 'nohup ', '\\', '/bin/', "bash -c '", 'sh -c "');
const target = fc.stringMatching(/^\/tmp\/spt-never-[a-z0-9]{1,8}$/);

/** A denied line: [prefix][wrapper]rm -rf <target>[closing quote][rest]. */
const deniedLine = fc.tuple(before_, wrapper, target).map(([b, w, t]) => {
  const close = w.endsWith("'") ? "'" : w.endsWith('"') ? '"' : '';
  const end = b === '( ' ? ' )' : b === '{ ' ? '; }' : b.startsWith('if') ? '; fi' : '';
  return `${b}${w}rm -rf ${t}${close}${end}`;
});

/** The line cut into writes at `cuts`, with a typo typed and backspaced at some cuts. */
function writesOf(line: string, cuts: number[], typos: boolean[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (line.length + 1)))].sort((a, b) => a - b);
  const writes: string[] = [];
  let from = 0;
  points.forEach((p, i) => {
    writes.push(line.slice(from, p) + (typos[i] ? 'zq\x7f\x7f' : ''));
    from = p;
  });
  writes.push(line.slice(from) + '\r');
  return writes.filter((w) => w !== '');
}

/** Keys that take the cursor back to the line's start (or, `left`, one Left per character). */
const backKeys = fc.constantFrom('\x1b[H', '\x1bOH', '\x1b[1~', '\x01', 'left', 'ctrl-b', 'words');

/**
 * The line typed out of order: its end first, the cursor sent back to the start, then its start,
 * the cursor sent to the end and Enter; cut into writes anywhere, inside escape sequences too.
 */
function outOfOrderWritesOf(line: string, at: number, back: string, cuts: number[]): string[] {
  const p = at % (line.length + 1);
  const [head, tail] = [line.slice(0, p), line.slice(p)];
  const n = [...tail].length;
  const home = back === 'left' ? '\x1b[D'.repeat(n) : back === 'ctrl-b' ? '\x02'.repeat(n) : back === 'words' ? '\x1bb'.repeat(n) : back;
  const typed = `${tail}${home}${head}\x05\r`;
  const points = [...new Set(cuts.map((c) => c % (typed.length + 1)))].sort((a, b) => a - b);
  return [0, ...points].map((q, i, all) => typed.slice(q, all[i + 1] ?? typed.length)).filter((w) => w !== '');
}

/** Whether the guard refuses one of the writes (in order) before the last one goes through. */
function refusedSomewhere(writes: string[]): boolean {
  const typed = new TypedLine();
  for (const w of writes) {
    const { lines } = typed.preview(w);
    const own = w.split(/[\r\n]+/).filter((l) => l.trim() !== '');
    if ([...lines, ...own].flatMap(commandsToJudge).some((t) => RULE.test(t))) return true;
    typed.observe(w, false);
  }
  return false;
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('fuzz: deny rules', () => {
  test('no split of a denied line across writes gets through', () => {
    fuzzSync(
      [deniedLine, fc.array(fc.nat(), { maxLength: 6 }), fc.array(fc.boolean(), { maxLength: 6 })],
      (line, cuts, typos) => assert.ok(refusedSomewhere(writesOf(line, cuts, typos)), JSON.stringify(writesOf(line, cuts, typos))),
      2000,
    );
  });

  test('a denied line typed out of order with the cursor keys is refused before its Enter', () => {
    fuzzSync(
      [deniedLine, fc.nat(), backKeys, fc.array(fc.nat(), { maxLength: 6 })],
      (line, at, back, cuts) => {
        const writes = outOfOrderWritesOf(line, at, back, cuts);
        assert.ok(refusedSomewhere(writes), JSON.stringify(writes));
      },
      2000,
    );
  });

  test('lines without the command are never refused', () => {
    const harmless = fc.stringMatching(/^[a-qs-z0-9 ;|&()'"$`=/.-]{0,40}$/); // no r: no rm
    fuzzSync([harmless], (line) => assert.ok(!refusedSomewhere([line + '\r']), JSON.stringify(line)), 2000);
  });
});

describe('fuzz: deny rules over the wire', () => {
  let h: Awaited<ReturnType<typeof startHost>>;
  let ctl: RpcClient;
  let agentCtl: RpcClient;
  let id: string;
  before(async () => {
    h = await startHost({ agentApproval: 'allow', agentDenyCommands: [RULE.source] });
    ctl = await connect(h.host.controlAddress);
    agentCtl = await connect(h.host.controlAddress);
    id = await agentCalls(ctl, agentCtl).open('agent');
  });
  after(async () => {
    agentCtl?.close();
    ctl?.close();
    await h?.close();
  });

  test("an agent's writes of a denied line, split anyhow, are refused before its Enter reaches bash", { timeout: 300_000 }, async () => {
    const { agentRpc, rpc } = agentCalls(ctl, agentCtl);
    await fuzz(
      [deniedLine, fc.array(fc.nat(), { maxLength: 4 }), fc.array(fc.boolean(), { maxLength: 4 })],
      async (line, cuts, typos) => {
        const writes = writesOf(line, cuts, typos);
        let refused = false;
        try {
          for (const text of writes) await agentRpc('pty/write', { session: id, action: { text } });
        } catch (e) {
          if (!(e instanceof RpcCallError) || !/deny rule/.test(e.message)) throw e;
          refused = true;
        } finally {
          await rpc('pty/write', { session: id, action: { key: 'Ctrl+C' } }); // the script clears the line for the next case
        }
        assert.ok(refused, `written whole: ${JSON.stringify(writes)}`);
      },
      25,
    );
  });
});
