// What the editor's session list offers and says when sharing a session (docs/protocol.md#scoped-tokens): the expiry
// choices are ones the host takes, the default first, and the notices name what a link allows and
// until when, in the user's local time. (The clicks themselves: test/e2e/editor.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TOKEN_SECONDS, shareMethod } from '../../../src/core/methods/token-methods';
import type { TokenInfo } from '../../../src/core/methods/types';
import { agoText, EXPIRY_CHOICES, revokedNotice, sharedNotice, tokenNotice, tokenRow, whenText } from '../../../src/vscode/share-links';

/** 2026-12-03 18:30 local time, whatever the machine's zone. */
const NOW = new Date(2026, 11, 3, 18, 30, 0);
const at = (days: number, h: number, m: number) => new Date(2026, 11, 3 + days, h, m, 0).toISOString();

function token(over: Partial<TokenInfo>): TokenInfo {
  return {
    id: 'tabc',
    scope: 'view',
    session: 's1',
    reusable: false,
    openedAt: null,
    createdAt: NOW.toISOString(),
    expiresAt: at(0, 19, 30),
    lastUsedAt: null,
    ...over,
  };
}

test('every expiry choice is one session/share accepts, the host default first, from 15 minutes to a week', () => {
  assert.equal(EXPIRY_CHOICES[0].seconds, DEFAULT_TOKEN_SECONDS, 'the first (default) choice is the host default');
  for (const c of EXPIRY_CHOICES) {
    assert.doesNotThrow(() => shareMethod.params.parse({ scope: 'view', expiresIn: c.seconds }), `${c.label} is accepted`);
  }
  assert.deepEqual(
    EXPIRY_CHOICES.map((c) => [c.label, c.seconds]),
    [
      ['1 hour', 3600],
      ['15 minutes', 900],
      ['8 hours', 28800],
      ['1 day', 86400],
      ['1 week', 604800],
    ],
  );
});

test('times read as a person says them: today, tomorrow, or the date', () => {
  assert.equal(whenText(at(0, 19, 5), NOW), 'today at 19:05');
  assert.equal(whenText(at(1, 2, 30), NOW), 'tomorrow at 02:30');
  assert.equal(whenText(at(7, 18, 30), NOW), 'Thu 10 Dec at 18:30');
  assert.equal(whenText(at(30, 9, 0), NOW), 'Sat 2 Jan 2027 at 09:00');
  assert.equal(whenText('not a date', NOW), 'not a date');
  assert.equal(agoText(NOW.toISOString(), NOW), 'just now');
  assert.equal(agoText(new Date(NOW.getTime() - 5 * 60_000).toISOString(), NOW), '5 min ago');
  assert.equal(agoText(new Date(NOW.getTime() - 3 * 3600_000).toISOString(), NOW), '3 h ago');
  assert.equal(agoText(new Date(NOW.getTime() - 2 * 86400_000).toISOString(), NOW), '2 days ago');
});

test('the notice after sharing says what the link allows, until when, and that it opens once; a reusable token says it is for scripts', () => {
  assert.equal(
    sharedNotice('bash-1', token({ scope: 'view' }), NOW),
    'Copied a read-only link to bash-1, until today at 19:30: whoever opens it first can watch it, not type, in that browser; then the link itself opens nothing. Revoke it from the session list.',
  );
  assert.match(
    sharedNotice('bash-1', token({ scope: 'input', expiresAt: at(1, 18, 30) }), NOW),
    /^Copied a link to bash-1 with input, until tomorrow at 18:30: whoever opens it first can watch it and type into it, in that browser/,
  );
  assert.match(
    tokenNotice('bash-1', token({ reusable: true }), 'http://127.0.0.1:1/mcp'),
    /^Copied a token for scripts and agents \(view, bash-1 only, token tabc\): send it as "Authorization: Bearer <token>" to REST, \/rpc or http:\/\/127\.0\.0\.1:1\/mcp\. It works until it expires/,
  );
});

test("the revoke list shows each link's kind, expiry and last use; the notice says what ended", () => {
  const view = token({ scope: 'view', lastUsedAt: new Date(NOW.getTime() - 120_000).toISOString() });
  const input = token({ id: 'tdef', scope: 'input' });
  assert.deepEqual(tokenRow(view, NOW), {
    label: 'Read-only link',
    description: 'until today at 19:30 · last used 2 min ago · not opened yet',
    detail: 'can watch it, not type · token tabc, made today at 18:30',
  });
  assert.equal(tokenRow(input, NOW).description, 'until today at 19:30 · never used · not opened yet');
  assert.equal(
    tokenRow(token({ openedAt: new Date(NOW.getTime() - 60_000).toISOString() }), NOW).description,
    'until today at 19:30 · never used · opened 1 min ago',
  );
  assert.equal(tokenRow(token({ reusable: true }), NOW).label, 'Token for scripts (view)');
  assert.match(revokedNotice('bash-1', [input]), /^Revoked the link with input to bash-1 \(token tdef\)/);
  assert.match(revokedNotice('bash-1', [view, input]), /^Revoked 2 shared links to bash-1/);
});
