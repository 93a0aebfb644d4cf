// What the terminal view tells the model about the person's typing (src/view/person-activity.ts):
// submitted lines and stop keys, a secret only as "a secret", edits applied, the recent ones kept.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { PersonActivity } from '../../../src/view/person-activity';

describe('PersonActivity', () => {
  test('tells submitted lines as typed, edits applied and arrows left out', () => {
    const a = new PersonActivity();
    assert.equal(a.typed('ls -lx', false), false);
    assert.equal(a.describe('s'), '', 'nothing is told before a line is submitted');
    a.typed('\x7fa\x1b[D\x1b[C', false);
    assert.equal(a.typed('\r', false), true);
    assert.match(a.describe('build'), /session build/);
    assert.match(a.describe('build'), /submitted: "ls -la"/);
  });

  test('a line typed at a secret prompt is told only as answered, whichever chunk found it secret', () => {
    const a = new PersonActivity();
    a.typed('hun', false); // typed before the host saw the prompt
    a.typed('ter2', true);
    a.typed('\r', true);
    const told = a.describe('s');
    assert.match(told, /answered the program's secret prompt/);
    assert.ok(!/hun|ter2/.test(told), told);
  });

  test('tells Ctrl+C and keeps the ten most recent actions', () => {
    const a = new PersonActivity();
    for (let i = 0; i < 12; i++) a.typed(`echo ${i}\r`, false);
    a.typed('\x03', false);
    const told = a.describe('s');
    assert.match(told, /pressed Ctrl\+C/);
    assert.ok(!told.includes('"echo 2"') && told.includes('"echo 3"'), told);
  });
});
