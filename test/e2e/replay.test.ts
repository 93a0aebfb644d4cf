// Replaying a recording in the browser (issue 15) with the real asciinema-player in Debian's
// Chromium (playwright-core): a real bash session with shell integration is recorded with
// pty/record, `host/replay` makes a link, and the page shows what the shell printed, the
// recording's markers (who typed, each command's exit code) as the player's markers, and no
// secret. A file picked in the page (read locally) plays, pauses, changes speed and seeks.
// Needs the bundles (`npm run build`: dist/replay.js, dist/asciinema-player.css) and /usr/bin/chromium.
/// <reference lib="dom" />
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { RpcClient } from '../../src/transport/client/rpc-client';
import { connect, until } from '../helpers/host';
import { startHttpHost, type HttpHost } from '../helpers/http';
import { chromiumSkip, launchChromium } from '../helpers/chromium';

/** What src/view/replay.ts exposes for tests. */
declare global {
  interface Window {
    __sharedPtyReplay?: { state: () => string; speed: () => number; player: () => import('asciinema-player').Player | undefined; markers: () => number };
  }
}

const ROOT = path.join(__dirname, '..', '..');
/** The README's picture (media/replay.png) is refreshed only when asked (SHARED_PTY_SCREENSHOTS=1): a test run leaves the tree clean. */
const SCREENSHOTS = process.env.SHARED_PTY_SCREENSHOTS === '1';
const skip = chromiumSkip('the replay test');
const linux = process.platform === 'linux';
/** Typed at `read -s` while recording: it must reach neither the file nor the page. */
const SECRET = 'hunter2-Replay9';

/** Bounds on waits; generous, since a browser on a loaded test machine is slow to start. */
const enum Wait {
  Load = 30_000,
  Screen = 20_000,
}

/** The rows the player's terminal shows (its text layer), trailing spaces trimmed. */
function playerRows(page: Page): Promise<string[]> {
  return page.evaluate(() => [...document.querySelectorAll('.ap-term-text .ap-line')].map((l) => (l.textContent ?? '').replace(/\s+$/, '')));
}

const replayState = (page: Page) => page.evaluate(() => window.__sharedPtyReplay?.state() ?? 'no replayer');
const currentTime = (page: Page) => page.evaluate(() => window.__sharedPtyReplay!.player()!.getCurrentTime());

async function waitForState(page: Page, want: string): Promise<void> {
  let last = '';
  try {
    await until(async () => (last = await replayState(page)) === want, Wait.Load, `replay state ${want}`);
  } catch (e) {
    const status = await page.textContent('#status').catch(() => '');
    throw new Error(`${(e as Error).message}; state ${last}, status: ${status}`, { cause: e });
  }
}

/** A long recording made by hand: a numbered line every second for two minutes. */
function longCast(): string {
  const lines = [JSON.stringify({ version: 3, term: { cols: 60, rows: 12 }, title: 'counting' })];
  for (let i = 1; i <= 120; i++) lines.push(JSON.stringify([1, 'o', `tick ${i}\r\n`]));
  return lines.join('\n') + '\n';
}

describe('replay in the browser (Chromium + asciinema-player)', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  let browser: Browser;
  let home: string;
  let castPath: string;
  const contexts: BrowserContext[] = [];
  /** Console errors and page errors (a CSP refusal, a failed WebAssembly compile): none are expected. */
  const problems: string[] = [];
  /** Every request a page made, to show nothing leaves for the internet and nothing is uploaded. */
  const requests: Array<{ url: string; method: string }> = [];

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);

  const newPage = async (): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 640 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(Wait.Load);
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('request', (r) => requests.push({ url: r.url(), method: r.method() }));
    return page;
  };

  before(async () => {
    if (skip) return;
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'replay.js')), 'dist/replay.js is missing: run `npm run build` first');
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
    home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-replay-e2e-')));
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='rec> '\nHISTFILE=/dev/null\n");
    browser = await launchChromium();
  });

  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close().catch(() => {});
    ctl?.close();
    await h?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it(
    'records a real bash session and replays it: the text it printed, its markers, no secret',
    { timeout: 120_000, skip: skip || (!linux && 'secret input needs Linux /proc') },
    async () => {
      const info = await rpc('session/create', { command: 'bash', args: [], cwd: home, env: { HOME: home }, cols: 80, rows: 16, name: 'replayed' });
      assert.equal(info.integration, true, 'shell integration reports commands');
      const session = info.id;
      await until(async () => (await rpc('pty/read', { session })).screen.trimEnd().endsWith('rec>'), Wait.Screen, 'the first prompt');
      castPath = path.join(home, 'session.cast');
      await rpc('pty/record', { session, path: castPath });
      const sent = await rpc('pty/send', { session, text: 'echo replay-$((6*7)); (exit 3)', timeout: Wait.Screen });
      assert.equal(sent.exitCode, 3);
      await rpc('pty/send', { session, text: "printf 'second %s\\n' line", timeout: Wait.Screen });
      await rpc('pty/write', { session, action: { text: 'read -s x; echo "got ${#x} chars"\r' } });
      await until(async () => (await rpc('pty/info', { session })).secretInput, Wait.Screen, 'the password prompt');
      await rpc('pty/write', { session, action: { text: `${SECRET}\r` } });
      await until(async () => (await rpc('pty/read', { session })).screen.includes(`got ${SECRET.length} chars`), Wait.Screen, 'the secret read');
      // A last command, so the end of the progress bar (a pixel short of the end) is past the secret read.
      await rpc('pty/send', { session, text: 'echo the-end', timeout: Wait.Screen });
      await rpc('pty/record', { session, stop: true });
      await rpc('pty/kill', { session });
      const fileMarkers = fs
        .readFileSync(castPath, 'utf8')
        .split('\n')
        .slice(1)
        .filter(Boolean)
        .map((l) => JSON.parse(l) as [number, string, string])
        .filter((e) => e[1] === 'm')
        .map((e) => e[2]);
      assert.ok(
        fileMarkers.some((m) => /^command exited 3: /.test(m)),
        JSON.stringify(fileMarkers),
      );

      const link = await rpc('host/replay', { path: castPath });
      const page = await newPage();
      await page.goto(link.url);
      assert.equal(new URL(page.url()).search, '', 'the token left the address bar');
      await waitForState(page, 'ready');
      assert.equal(await page.title(), 'session.cast — Shared PTY replay');

      // The player's own start button plays it to the end: its terminal shows the session's last screen.
      await page.click('.ap-overlay-start');
      await waitForState(page, 'ended');
      // The player says "ended" as it draws its last frame: its screen is read once that frame is there.
      let rows: string[] = [];
      await until(async () => (rows = await playerRows(page)).some((r) => r === 'the-end'), Wait.Screen, 'the last screen').catch(() =>
        assert.fail(JSON.stringify(rows)),
      );
      assert.ok(
        rows.some((r) => r.includes(`got ${SECRET.length} chars`)),
        JSON.stringify(rows),
      );
      assert.ok(
        rows.some((r) => r === 'the-end'),
        JSON.stringify(rows),
      );
      assert.ok(
        rows.some((r) => r === 'replay-42'),
        JSON.stringify(rows),
      );
      assert.ok(
        rows.some((r) => r === 'second line'),
        JSON.stringify(rows),
      );
      assert.ok(
        rows.some((r) => r.endsWith('echo replay-$((6*7)); (exit 3)')),
        JSON.stringify(rows),
      );

      // The file's markers are the player's markers (on its progress bar) and the page's list.
      const tooltips = await page.$$eval('.ap-marker-container .ap-tooltip', (els) => els.map((e) => e.textContent ?? ''));
      assert.equal(tooltips.length, fileMarkers.length, JSON.stringify(tooltips));
      for (const label of fileMarkers)
        assert.ok(
          tooltips.some((t) => t.endsWith(` - ${label}`)),
          `${label} in ${JSON.stringify(tooltips)}`,
        );
      const listed = await page.$$eval('#markers li', (els) => els.map((e) => e.textContent ?? ''));
      assert.ok(
        listed.some((l) => /command exited 3: echo replay/.test(l)),
        JSON.stringify(listed),
      );
      // The password's write is marked as any other write without input text: who, how, how many bytes.
      assert.ok(
        listed.some((l) => l.endsWith(`input from script via control: ${Buffer.byteLength(`${SECRET}\r`)} bytes`)),
        JSON.stringify(listed),
      );

      // A marker in the list takes the player to that marker.
      const index = fileMarkers.findIndex((m) => m.startsWith('command exited 3'));
      await page.locator('#markers li button').nth(index).click();
      await until(
        async () => (await playerRows(page)).some((r) => r === 'replay-42') && !(await playerRows(page)).some((r) => r.includes('second line')),
        Wait.Screen,
        'the screen at the marker',
      );
      await waitForState(page, 'paused');
      assert.match(
        (await page.locator('#status').textContent()) ?? '',
        /^paused at 0:0\d: command exited 3: echo replay/,
        'the page says where it stopped, no longer "ended"',
      );
      if (SCREENSHOTS) {
        // Mid-way, with the control bar (its markers) shown as when the pointer is over the player.
        await page.hover('#player');
        await page.locator('.ap-marker-container').first().waitFor({ state: 'visible' });
        await page.screenshot({ path: path.join(ROOT, 'media', 'replay.png') });
      }

      // The secret is nowhere: not in the file the page got, not on the page.
      const served = await page.evaluate(async (cast) => (await fetch(cast)).text(), `/replay/${link.id}/cast`);
      assert.ok(served.length > 0 && !served.includes(SECRET), 'the file the page loads has no secret');
      assert.ok(!(await page.content()).includes(SECRET));
      assert.deepEqual(problems, [], 'no CSP refusal or script error on the page');
    },
  );

  it(
    'a file picked in the page plays, pauses, changes speed and seeks; a wrong file gets a sentence; nothing is uploaded',
    { skip, timeout: 120_000 },
    async () => {
      const page = await newPage();
      // The page cookie of a live view opens the picker, as the view's "Replay a recording" link does.
      const viewed = await rpc('session/create', { command: 'bash', args: ['--norc', '--noprofile'], name: 'viewed' });
      await page.goto((await rpc('session/viewUrl', { session: viewed.id })).url);
      await page.goto(`${h.http.url}/replay`);
      await page.waitForSelector('#file');
      assert.equal(await replayState(page), 'empty');
      const before = requests.length;

      await page.setInputFiles('#file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('some notes, not a recording\n') });
      await waitForState(page, 'error');
      assert.match((await page.textContent('#status')) ?? '', /notes\.txt is not an asciicast recording/);

      await page.setInputFiles('#file', { name: 'counting.cast', mimeType: 'application/x-asciicast', buffer: Buffer.from(longCast()) });
      await waitForState(page, 'ready');
      assert.equal(await currentTime(page), 0);

      // Play and pause with the player's own button.
      await page.hover('#player');
      await page.click('.ap-playback-button');
      await waitForState(page, 'playing');
      await until(async () => (await currentTime(page)) > 0, Wait.Screen, 'the clock to run');
      await until(async () => (await playerRows(page)).some((r) => r === 'tick 1'), Wait.Screen, 'the first line');
      await page.hover('#player');
      await page.click('.ap-playback-button');
      await waitForState(page, 'paused');
      const pausedAt = await currentTime(page);
      const rowsAtPause = await playerRows(page);
      await page.waitForTimeout(500);
      assert.equal(await currentTime(page), pausedAt, 'paused: the clock stands still');
      assert.deepEqual(await playerRows(page), rowsAtPause, 'paused: the screen stands still');

      // 4×: the player starts again where it was, and its clock runs four times as fast as the wall clock.
      await page.selectOption('#speed', '4');
      await until(async () => (await page.evaluate(() => window.__sharedPtyReplay!.speed())) === 4, Wait.Screen, 'the speed');
      assert.equal(await replayState(page), 'paused', 'a speed change does not start playing');
      await until(async () => Math.abs((await currentTime(page)) - pausedAt) < 1e-6, Wait.Screen, 'the new player at the paused time');
      await page.hover('#player');
      await page.click('.ap-playback-button');
      await waitForState(page, 'playing');
      const rate = await page.evaluate(async () => {
        const p = window.__sharedPtyReplay!.player()!;
        const wall0 = performance.now();
        const media0 = p.getCurrentTime();
        await new Promise((r) => setTimeout(r, 1000));
        return (p.getCurrentTime() - media0) / ((performance.now() - wall0) / 1000);
      });
      assert.ok(rate > 3 && rate < 5, `at 4× the recording runs ${rate.toFixed(2)}× as fast as the wall clock`);
      assert.ok((await currentTime(page)) > pausedAt);

      // Paused again, the player's progress bar seeks: a quarter of the way in, the screen ends with the line of that second.
      await page.hover('#player');
      await page.click('.ap-playback-button');
      await waitForState(page, 'paused');
      const duration = (await page.evaluate(() => window.__sharedPtyReplay!.player()!.getDuration()))!;
      const bar = page.locator('.ap-progressbar .ap-bar');
      await page.hover('#player');
      const box = (await bar.boundingBox())!;
      await bar.click({ position: { x: box.width / 4, y: box.height / 2 } });
      await until(async () => Math.abs((await currentTime(page)) - duration / 4) < duration / 50, Wait.Screen, 'the seek to a quarter');
      const at = await currentTime(page);
      let lastRow = '';
      await until(
        async () => (lastRow = (await playerRows(page)).filter(Boolean).pop() ?? '') === `tick ${Math.floor(at)}`,
        Wait.Screen,
        `tick ${Math.floor(at)} at ${at}`,
      ).catch((e) => {
        throw new Error(`${(e as Error).message}; last row: ${lastRow}`);
      });

      // The file was read in the page: no request since carried it anywhere, and none left this host.
      const since = requests.slice(before);
      assert.deepEqual(
        since.filter((r) => r.method !== 'GET'),
        [],
        'nothing was uploaded',
      );
      assert.deepEqual(
        requests.filter((r) => new URL(r.url).origin !== h.http.url && !r.url.startsWith('data:')),
        [],
        'nothing came from elsewhere',
      );
      assert.deepEqual(problems, [], 'no CSP refusal or script error on the page');
    },
  );
});
