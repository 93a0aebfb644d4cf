// What `view`, `share` and `play --browser` print (docs/protocol.md, Links and page cookies): links
// with tokens of their own, never the host's, in any printed line; each listed by `tokens` and ended
// by `revoke`. They are usually printed into a shared session, so a view-only guest who reads that
// screen must find nothing usable once the link was opened. The built CLI against a `shared-pty serve`
// host, the commands typed into its real bash.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli, startServeHost, startedPids, stopPid, type ServeHost } from '../../helpers/cli';
import { request } from '../../helpers/http';
import { connect, tempRuntimeDir, until } from '../../helpers/host';
import { bashEnv, buildCli, CLI } from '../../helpers/protocol';

const CAST = '{"version": 3, "term": {"cols": 80, "rows": 24}}\n[0.2, "o", "hello\\r\\n"]\n';
/** Bounds on waits for the shell; generous, the machine is shared. */
const SCREEN_MS = 20_000;

let dir: string;
let files: string;
let serve: ServeHost;
let env: NodeJS.ProcessEnv;
let port: number;
let hostToken: string;
let sessionId: string;

before(async () => {
  buildCli();
  dir = tempRuntimeDir();
  files = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-view-links-'));
  env = bashEnv({ SHARED_PTY_DIR: dir, PS1: 'shared$ ' });
  serve = await startServeHost(['--cmd', 'bash --norc --noprofile'], env);
  const http = serve.record.http;
  assert.ok(http, 'serve publishes its HTTP server');
  port = Number(new URL(http.url).port);
  hostToken = http.token;
  sessionId = serve.record.sessions[0].id;
});

after(async () => {
  await serve?.stop();
  for (const pid of startedPids) await stopPid(pid);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(files, { recursive: true, force: true });
});

/** Opens a link as a browser would: the page cookie it sets, or the refusal's status. */
async function openLink(url: string): Promise<{ status: number; cookie?: string }> {
  const u = new URL(url);
  const r = await request(port, 'GET', u.pathname + u.search, { headers: { accept: 'text/html' } });
  return { status: r.status, cookie: r.status === 303 ? String(r.headers['set-cookie']).split(';')[0] : undefined };
}

describe('links the CLI prints', { timeout: 120_000 }, () => {
  test('view, view --input, share, share --reusable, play --browser, serve and errors print no host token; each link is listed and revocable', async () => {
    const cast = path.join(files, 'demo.cast');
    fs.writeFileSync(cast, CAST);
    const runs = {
      view: await runCli(['view', sessionId], env),
      viewInput: await runCli(['view', sessionId, '--input', '--expires', '2h'], env),
      viewReadOnly: await runCli(['view', sessionId, '--read-only'], env),
      share: await runCli(['share', sessionId, '--scope', 'input'], env),
      reusable: await runCli(['share', sessionId, '--reusable'], env),
      play: await runCli(['play', cast, '--browser'], env),
      shareJson: await runCli(['share', sessionId, '--json'], env),
    };
    for (const [name, r] of Object.entries(runs)) {
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.ok(!(r.stdout + r.stderr).includes(hostToken), `${name} printed the host's token: ${r.stdout}${r.stderr}`);
    }
    const errors = [
      await runCli(['view', 'no-such-session'], env),
      await runCli(['view', sessionId, '--input', '--read-only'], env),
      await runCli(['share', sessionId, '--expires', 'never'], env),
    ];
    for (const r of errors) {
      assert.notEqual(r.code, 0);
      assert.ok(!(r.stdout + r.stderr).includes(hostToken));
    }
    assert.equal(errors[1].code, 2, '--input and --read-only exclude each other');
    assert.ok(!serve.output().includes(hostToken), "serve's start-up lines hold no token");

    // view: a link alone on stdout, what it allows on stderr; a one-time link of view scope, 8 h.
    const viewUrl = runs.view.stdout.trim();
    assert.match(viewUrl, new RegExp(`^http://127\\.0\\.0\\.1:${port}/sessions/${sessionId}/view\\?token=[A-Za-z0-9_-]{43}$`));
    assert.match(
      runs.view.stderr,
      /^\(view access to session \S+ until \S+: the link opens once, in the first browser that opens it, and until then its token also works for scripts and agents \("Authorization: Bearer <token>"\); after that neither opens anything \(token id (t[0-9a-f]+); end it with: shared-pty revoke t[0-9a-f]+\)\)\n$/,
    );
    assert.match(runs.viewInput.stderr, /^\(input access/);
    assert.match(runs.viewReadOnly.stderr, /^\(view access/);
    // share: the link and its token, which scripts use until the link is opened; --reusable's until it expires.
    const linkToken = /^token: +(\S+)$/m.exec(runs.share.stdout)?.[1];
    assert.ok(linkToken && runs.share.stdout.includes(`?token=${linkToken}`), runs.share.stdout);
    assert.equal((await request(port, 'GET', `/sessions/${sessionId}`, { token: linkToken })).status, 200, "a link's token, before its page was opened");
    const reusableToken = /^token: +(\S+)$/m.exec(runs.reusable.stdout)?.[1];
    assert.ok(reusableToken, runs.reusable.stdout);
    assert.match(runs.reusable.stdout, /a reusable token: scripts and agents send it as "Authorization: Bearer <token>" until it expires/);
    assert.equal((await request(port, 'GET', `/sessions/${sessionId}`, { token: reusableToken })).status, 200);
    assert.equal(JSON.parse(runs.shareJson.stdout).info.reusable, false);

    const ids = Object.values(runs).flatMap((r) => [...(/(?:revoke |"id":")(t[0-9a-f]{10})/g.exec(r.stdout + r.stderr)?.slice(1) ?? [])]);
    assert.equal(ids.length, Object.keys(runs).length, `an id on every run: ${ids.join(' ')}`);
    const listed = JSON.parse((await runCli(['tokens', '--json'], env)).stdout) as Array<{ id: string; reusable: boolean }>;
    for (const id of ids)
      assert.ok(
        listed.some((t) => t.id === id),
        `tokens lists ${id}`,
      );
    const table = (await runCli(['tokens'], env)).stdout;
    assert.match(table, /^ID +SCOPE +SESSION +KIND +EXPIRES +LAST USE$/m);
    assert.match(table, /link, not opened/);
    assert.match(table, / reusable /);

    // view's link opens once; revoke ends what it opened.
    const opened = await openLink(viewUrl);
    assert.equal(opened.status, 303);
    assert.equal((await openLink(viewUrl)).status, 401, 'the printed link opens nothing more');
    const viewId = /revoke (t[0-9a-f]+)/.exec(runs.view.stderr)![1];
    assert.equal((await runCli(['revoke', viewId], env)).code, 0);
    const after = await request(port, 'GET', `/sessions/${sessionId}/view`, { headers: { cookie: opened.cookie!, accept: 'text/html' } });
    assert.equal(after.status, 401);
    assert.match(after.text, /This link was revoked/);
  });

  test("view's bad flags are usage errors (2) found before any host is asked: with no host running, and for a session no host has", async () => {
    // docs/cli.md#flags: as `share --expires 0s` is; never "no host is running" nor "unknown session".
    const noHost = { ...env, SHARED_PTY_DIR: tempRuntimeDir() };
    const bad: Array<[string[], RegExp]> = [
      [['--expires', 'abc'], /^shared-pty: --expires needs a duration from 1s to 30d \(like 90s, 15m, 1h, 2d\), got "abc"/],
      [['--expires', '31d'], /^shared-pty: --expires needs a duration from 1s to 30d .*got "31d"/],
      [['--expires', '0'], /^shared-pty: --expires needs a duration from 1s to 30d .*got "0"/],
      [['--input', '--read-only'], /^shared-pty: --read-only and --input exclude each other/],
    ];
    try {
      for (const [flags, said] of bad) {
        for (const [where, e, session] of [
          ['no host running', noHost, 'x'],
          ['a session no host has', env, 'nosuch'],
          ['a session of the host', env, sessionId],
        ] as const) {
          const r = await runCli(['view', session, ...flags], e);
          assert.equal(r.code, 2, `view ${session} ${flags.join(' ')} (${where}): exit 2; stderr: ${r.stderr}`);
          assert.match(r.stderr, said, `view ${session} ${flags.join(' ')} (${where})`);
          assert.equal(r.stdout, '');
        }
      }
    } finally {
      fs.rmSync(noHost.SHARED_PTY_DIR, { recursive: true, force: true });
    }
  });

  test('a view-only guest reading the shared screen after `view` ran there finds no usable token', async () => {
    // The guest: a reusable view token, reading the session's output as any script would.
    const ctl = await connect(serve.record.control);
    const guestToken = ((await ctl.call('session/share', { session: sessionId, scope: 'view', reusable: true })) as { token: string }).token;
    ctl.close();
    const screen = async () => (await request(port, 'GET', `/sessions/${sessionId}?since=0&strip`, { token: guestToken })).text;
    // The owner runs `shared-pty view` inside the shared session (as one does) and opens the link.
    const typed = await request(port, 'POST', `/sessions/${sessionId}/write`, {
      token: hostToken,
      body: { data: `${process.execPath} ${CLI} view ${sessionId}` },
    });
    assert.equal(typed.status, 200, typed.text);
    const printed = await until(
      async () => /http:\/\/127\.0\.0\.1:\d+\/sessions\/\S+\/view\?token=[A-Za-z0-9_-]{43}/.exec(await screen())?.[0],
      SCREEN_MS,
      'the link on the shared screen',
    );
    assert.equal((await openLink(printed)).status, 303, "the owner's browser opens it");

    const text = await screen();
    assert.ok(!text.includes(hostToken), "the host's token is not on the screen");
    const candidates = [...new Set(text.match(/[A-Za-z0-9_-]{40,}/g) ?? [])];
    assert.ok(candidates.length > 0, "the link's token is on the screen, for the guest to try");
    for (const c of candidates) {
      assert.notEqual(c, hostToken);
      assert.equal((await request(port, 'GET', '/sessions', { token: c })).status, 401, 'as a Bearer token');
      assert.equal((await request(port, 'POST', '/sessions', { token: c, body: { command: 'bash' } })).status, 401, 'to open a session');
      assert.equal((await request(port, 'POST', `/sessions/${sessionId}/write`, { token: c, body: { data: 'echo pwned' } })).status, 401, 'to type');
      assert.equal((await openLink(`http://127.0.0.1:${port}/sessions/${sessionId}/view?token=${c}`)).status, 401, 'as a link');
    }
  });
});
