// The HTTP router (src/transport/http/http-router.ts): routes declared as data, matched by segments.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { matchRoute, type HttpRoute } from '../../../../src/transport/http/http-router';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

const ROUTES: ReadonlyArray<HttpRoute<string>> = [
  { verbs: ['GET'], pattern: '/health', access: 'api', handle: 'health' },
  { verbs: '*', pattern: '/sessions/:id/view', access: 'page', handle: 'view' },
  { verbs: ['GET'], pattern: '/sessions/:id', access: 'api', handle: 'get' },
  { verbs: ['DELETE'], pattern: '/sessions/:id', access: 'api', handle: 'delete' },
  { verbs: '*', pattern: '/view/*', access: 'page', handle: 'asset' },
];

const handled = (verb: string, path: string) => matchRoute(ROUTES, verb, path)?.route.handle;

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

describe('http-router', () => {
  test('a route answers its verbs only; another verb on the same path is no route', () => {
    assert.equal(handled('GET', '/sessions/abc'), 'get');
    assert.equal(handled('DELETE', '/sessions/abc'), 'delete');
    assert.equal(handled('POST', '/sessions/abc'), undefined);
    assert.equal(handled('PUT', '/sessions/abc/view'), 'view', '`*` takes any verb (the handler answers 405)');
  });

  test('a :param is one segment, raw and decoded; a malformed encoding decodes to undefined', () => {
    assert.deepEqual(matchRoute(ROUTES, 'GET', '/sessions/a%20b')?.params, { raw: { id: 'a%20b' }, decoded: { id: 'a b' }, rest: '' });
    assert.deepEqual(matchRoute(ROUTES, 'GET', '/sessions/%zz')?.params.decoded, { id: undefined });
    assert.equal(handled('GET', '/sessions/a/b/c'), undefined);
  });

  test('`*` takes one or more segments; empty segments do not count, as REST always took them', () => {
    assert.equal(matchRoute(ROUTES, 'GET', '/view/xterm.css')?.params.rest, 'xterm.css');
    assert.equal(handled('GET', '/view'), undefined);
    assert.equal(handled('GET', '/sessions/'), undefined);
    assert.equal(handled('GET', '/sessions/abc/'), 'get');
    assert.equal(handled('GET', '//health'), 'health');
  });

  test('no prefix is assumed: a path under another folder matches nothing', () => {
    assert.equal(handled('GET', '/proxy/8080/health'), undefined);
    assert.equal(handled('GET', '/healthz'), undefined);
  });
});
