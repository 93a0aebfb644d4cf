// What the replay page reads from a recording before handing it to asciinema-player
// (src/view/cast-outline.ts): a wrong file gets a sentence, markers get the player's times.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clock, DEFAULT_IDLE_LIMIT, forPlayer, MARKER_TAIL, outlineCast } from '../../../src/view/cast-outline';

test("markers of a v3 recording at the player's times: pauses cut to the idle limit", () => {
  const text = [
    '{"version": 3, "term": {"cols": 80, "rows": 24}}',
    '# a comment',
    '[0.5, "o", "$ "]',
    '[0.2, "m", "input from agent via mcp-http"]',
    '[3600, "i", "false\\r"]',
    '[0.3, "m", "command exited 1: false"]',
    '',
  ].join('\n');
  const o = outlineCast(text, 'a.cast');
  assert.equal(o.version, 3);
  assert.equal(o.idleTimeLimit, DEFAULT_IDLE_LIMIT);
  assert.deepEqual(
    o.markers.map((m) => [Number(m.time.toFixed(3)), m.label]),
    [
      [0.7, 'input from agent via mcp-http'],
      [0.7 + DEFAULT_IDLE_LIMIT + 0.3, 'command exited 1: false'],
    ],
  );
});

test("the file's idle limit wins; v2 times are absolute", () => {
  const o = outlineCast('{"version": 2, "width": 80, "height": 24, "idle_time_limit": 0.5}\n[1.0, "o", "x"]\n[10.0, "m", "late"]\n', 'b.cast');
  assert.equal(o.idleTimeLimit, 0.5);
  assert.deepEqual(o.markers, [{ time: 1.0, label: 'late' }]);
});

test('what is not a recording says so, and where', () => {
  assert.throws(() => outlineCast('hello\n', 'notes.txt'), /notes\.txt is not an asciicast recording/);
  assert.throws(() => outlineCast('{"version": 1}\n', 'old.json'), /not an asciicast recording/);
  assert.throws(
    () => outlineCast('{"version": 3, "term": {"cols": 80, "rows": 24}}\n[0.1, "o", "x"]\n[oops\n', 'c.cast'),
    /c\.cast, line 3: not an asciicast event/,
  );
});

test('a recording that ends with a marker gets a moment after it, so the player draws that marker too', () => {
  const v3 = '{"version": 3, "term": {"cols": 80, "rows": 24}}\n[0.5, "o", "$ "]\n[0.1, "m", "command exited 0: true"]\n';
  assert.equal(forPlayer(v3, outlineCast(v3, 'a')), `${v3}[${MARKER_TAIL},"o",""]\n`);
  const v2 = '{"version": 2, "width": 80, "height": 24}\n[1.5, "m", "end"]';
  assert.equal(forPlayer(v2, outlineCast(v2, 'b')), `${v2}\n[${1.5 + MARKER_TAIL},"o",""]\n`);
  const plain = '{"version": 3, "term": {"cols": 80, "rows": 24}}\n[0.1, "m", "x"]\n[0.5, "o", "$ "]\n';
  assert.equal(forPlayer(plain, outlineCast(plain, 'c')), plain, 'nothing added when output comes last');
});

test('clock', () => {
  assert.equal(clock(0), '0:00');
  assert.equal(clock(65.9), '1:05');
  assert.equal(clock(3725), '1:02:05');
});
