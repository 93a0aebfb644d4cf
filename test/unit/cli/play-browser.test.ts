// `shared-pty play <file> --browser`: the built CLI asks the running host (found through discovery)
// for a replay link and prints it; the link opens that recording. Without a host that serves HTTP
// it says what to do.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli, startedPids, stopPid } from '../../helpers/cli';
import { request, startHttpHost, type HttpHost } from '../../helpers/http';
import { tempRuntimeDir } from '../../helpers/host';
import { buildCli, REPO_ROOT } from '../../helpers/protocol';
import { ensureNoDisposablesAreLeakedBySuite } from '../../helpers/leak-tracker';

const CAST = '{"version": 3, "term": {"cols": 80, "rows": 24}}\n[0.2, "o", "from the cli\\r\\n"]\n';

let h: HttpHost;
let out: string;

before(async () => {
  buildCli();
  h = await startHttpHost();
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-play-browser-'));
});

after(async () => {
  for (const pid of startedPids) await stopPid(pid);
  await h?.close();
  fs.rmSync(out, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

test('prints a link that replays the file (a relative path is from where the command runs)', { timeout: 30_000 }, async () => {
  fs.writeFileSync(path.join(out, 'demo.cast'), CAST);
  const r = await runCli(['play', path.relative(REPO_ROOT, path.join(out, 'demo.cast')), '--browser'], { ...process.env, SHARED_PTY_DIR: h.dir });
  assert.equal(r.code, 0, r.stderr);
  const url = new URL(r.stdout.trim());
  assert.equal(url.origin, h.http.url);
  assert.match(url.pathname, /^\/replay\/[0-9a-f]{32}$/);
  assert.match(r.stderr, /opens nothing else; it opens once/);
  assert.ok(!(r.stdout + r.stderr).includes(h.token), "no printed line holds the host's token");
  const page = await request(h.port, 'GET', url.pathname + url.search);
  assert.equal(page.status, 303, "the link's token is traded for a cookie");
  const cookie = String(page.headers['set-cookie']).split(';')[0];
  const again = await request(h.port, 'GET', `${url.pathname}/cast`, { headers: { cookie } });
  assert.equal(again.text, CAST);
  assert.equal((await request(h.port, 'GET', url.pathname + url.search)).status, 401, 'the printed link opens nothing more');
  // `tokens` lists it, `revoke` ends it (the id is on the printed line).
  const id = /shared-pty revoke (t[0-9a-f]+)/.exec(r.stderr)?.[1];
  assert.ok(id, r.stderr);
  const env = { ...process.env, SHARED_PTY_DIR: h.dir };
  const listed = await runCli(['tokens'], env);
  assert.match(listed.stdout, new RegExp(`^${id} +view +replay demo\\.cast +link, opened `, 'm'), listed.stdout);
  assert.equal((await runCli(['revoke', id], env)).code, 0);
  assert.equal((await request(h.port, 'GET', `${url.pathname}/cast`, { headers: { cookie } })).status, 401, 'revoked: the cookie opens it no more');
});

test('a file that is no recording, a flag that makes no sense, no host: one clear line each', { timeout: 30_000 }, async () => {
  const env = { ...process.env, SHARED_PTY_DIR: h.dir };
  fs.writeFileSync(path.join(out, 'notes.txt'), 'hello\n');
  const notCast = await runCli(['play', path.join(out, 'notes.txt'), '--browser'], env);
  assert.equal(notCast.code, 1);
  assert.match(notCast.stderr, /^shared-pty: Cannot replay: .*notes\.txt is not an asciicast v3 recording/);
  const speed = await runCli(['play', path.join(out, 'demo.cast'), '--browser', '--speed', '2'], env);
  assert.equal(speed.code, 2);
  assert.match(speed.stderr, /the browser page has its own speed choice/);
  const empty = tempRuntimeDir();
  try {
    const none = await runCli(['play', path.join(out, 'demo.cast'), '--browser'], { ...process.env, SHARED_PTY_DIR: empty });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no running Shared PTY host serves HTTP.*shared-pty serve/);
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
});
