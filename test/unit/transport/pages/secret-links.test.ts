// The one-time links of secret pages (src/transport/pages/secret-links.ts): each works once, until
// its lifetime is over, and says why it no longer works; the default lifetime is five minutes.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { SECRET_PAGE_LIFETIME_MS, SecretLinks } from '../../../../src/transport/pages/secret-links';
import type { Session } from '../../../../src/core/session/session';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

const session = { id: 's1' } as Session;

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

describe('SecretLinks', () => {
  test('a link is used once; a second use says it was used', () => {
    const links = new SecretLinks((id) => `http://127.0.0.1:1/secret/${id}`);
    const { url } = links.open(session);
    const id = url.split('/').at(-1)!;
    assert.match(id, /^[A-Za-z0-9_-]{22}$/, '128 random bits');
    assert.deepEqual(links.peek(id), { session: 's1' }, 'showing the form does not use it');
    assert.deepEqual(links.take(id), { session: 's1' });
    assert.deepEqual(links.take(id), { refused: 'used' });
    assert.deepEqual(links.peek('nosuch'), { refused: 'unknown' });
  });

  test('a link expires after its lifetime, five minutes by default', () => {
    let now = 1_000_000;
    const links = new SecretLinks(
      (id) => id,
      undefined,
      () => now,
    );
    const link = links.open(session);
    assert.equal(Date.parse(link.expiresAt) - now, SECRET_PAGE_LIFETIME_MS);
    assert.equal(SECRET_PAGE_LIFETIME_MS, 5 * 60 * 1000);
    now += SECRET_PAGE_LIFETIME_MS - 1;
    assert.deepEqual(links.peek(link.url), { session: 's1' });
    now += 1;
    assert.deepEqual(links.take(link.url), { refused: 'expired' });
  });
});
