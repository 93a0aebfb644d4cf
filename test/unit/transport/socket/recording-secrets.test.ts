// docs/guarantees.md#no-side-doors, what a recording keeps of input: by default an `m` marker per write (who typed,
// how many bytes), never the text; with `pty/record { input: true }` the text, except what the
// terminal hides as it arrives (judged at the moment the bytes reach the PTY, never by polling)
// and what a write holds after its first Enter (typed ahead). A raw-mode password prompt (a real
// `npm login`) is secret input: SessionInfo.secretInput, the event, `pty/send`'s wait reason, the
// agents' refusal. Real bash with shell integration in a real host, a script on the control
// socket, an agent over /mcp with the SDK's client; the secrets must be in no file the host wrote.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startHttpHost, wsConnect, type HttpHost, mcpAgent } from '../../../helpers/http';
import { connect, until, clientsClosed } from '../../../helpers/host';
import type { Notification, RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const linux = process.platform === 'linux';
type Event = [number, string, string];

function readCast(file: string): Event[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .slice(1)
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
}

/** Every file under `dir` (the host's runtime folder: records, command logs) that holds `text`. */
function filesHolding(dir: string, text: string): string[] {
  const found: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) found.push(...filesHolding(p, text));
    else if (e.isFile() && fs.readFileSync(p).includes(text)) found.push(p);
  }
  return found;
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

function hasNpm(): boolean {
  try {
    execFileSync('npm', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A loopback port nothing listens on: `npm login` fails there at once, after its prompts. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** Secret input is judged through Linux's /proc and tcgetattr. */
const notLinux = !linux && 'secret input needs Linux';
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('what a recording keeps of input, and raw-mode password prompts', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  let agent: Client;
  const notes: Notification[] = [];
  const dirs: string[] = [];
  const tempDir = () => {
    const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-recsec-')));
    dirs.push(d);
    return d;
  };

  before(async () => {
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
    ctl.onNotification((n) => notes.push(n));
    agent = await mcpAgent(h, 'record-secrets-test');
  });

  after(async () => {
    await agent?.close().catch(() => {});
    ctl?.close();
    await h?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);
  const toolText = (r: any) => (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');

  /** An interactive bash (shell integration injected) in a HOME of its own, at its first prompt. */
  async function integratedBash(env: Record<string, string> = {}): Promise<string> {
    const home = tempDir();
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='rec> '\nHISTFILE=/dev/null\n");
    const info = await rpc('session/create', { command: 'bash', args: [], cwd: home, env: { HOME: home, ...env }, cols: 100, rows: 30 });
    assert.equal(info.integration, true);
    await until(async () => (await rpc('pty/read', { session: info.id })).screen.trimEnd().endsWith('rec>'), 15_000, 'the first prompt');
    return info.id;
  }

  /** The session's output as it arrives (pty/subscribe), so a test can act the moment something shows. */
  async function follow(session: string): Promise<{ text(): string }> {
    let text = '';
    ctl.onNotification((n) => {
      if (n.method === 'pty/output' && n.params.session === session) text += n.params.data as string;
    });
    await rpc('pty/subscribe', { session });
    return { text: () => text };
  }

  test(
    'input: true, an expect-style script answers `read -s` 0–100 ms after the prompt shows, 8 times: no answer is in the recording',
    { timeout: 120_000, skip: notLinux },
    async () => {
      const session = await integratedBash();
      const out = await follow(session);
      const file = path.join(tempDir(), 'expect.cast');
      const started = await rpc('pty/record', { session, path: file, input: true });
      assert.equal(started.input, true);
      const secrets: string[] = [];
      for (let i = 0; i < 8; i++) {
        const secret = `hunter2-Exp${i}q`;
        secrets.push(secret);
        const mark = out.text().length;
        // The prompt is built when read runs: the echo of the command line does not show it.
        await rpc('pty/write', { session, action: { text: `p=Pass; read -s -p "\${p}word ${i}: " x; echo "len=\${#x}"\r` } });
        await until(() => out.text().slice(mark).includes(`Password ${i}: `), 10_000, `prompt ${i}`);
        // As expect or a password manager's auto-type does: a moment after the prompt, from 0 to 100 ms.
        await new Promise((r) => setTimeout(r, Math.round((i * 100) / 7)));
        await rpc('pty/write', { session, action: { text: `${secret}\r` } });
        await until(() => out.text().slice(mark).includes(`len=${secret.length}`), 10_000, `answer ${i} read`);
        await until(async () => (await rpc('pty/read', { session })).screen.trimEnd().endsWith('rec>'), 10_000, `the prompt after ${i}`);
      }
      await rpc('pty/record', { session, stop: true });
      const raw = fs.readFileSync(file, 'utf8');
      const leaked = secrets.filter((s) => raw.includes(s));
      assert.deepEqual(leaked, [], `${leaked.length} of 8 answers are in the recording`);
      const events = readCast(file);
      const typed = JSON.stringify(events.filter((e) => e[1] !== 'o'));
      const markers = events.filter((e) => e[1] === 'm').map((e) => e[2]);
      assert.equal(markers.filter((m) => m === 'secret input withheld (typed by script)').length, 8, typed);
      // The commands themselves were shown as typed, so they are kept.
      assert.equal(events.filter((e) => e[1] === 'i' && e[2].startsWith('p=Pass; read -s')).length, 8, typed);
      assert.deepEqual(filesHolding(h.dir, 'hunter2-Exp'), [], 'nothing the host wrote holds a secret');
      await rpc('pty/kill', { session });
    },
  );

  test(
    'by default the recording has no input text: one m marker per write says who typed, how and how many bytes',
    { timeout: 90_000, skip: notLinux },
    async () => {
      const session = await integratedBash();
      const file = path.join(tempDir(), 'default.cast');
      const started = await rpc('pty/record', { session, path: file });
      assert.equal(started.input, false);

      const scriptLine = 'echo script-$((6*7))\r';
      await rpc('pty/write', { session, action: { text: scriptLine } });
      await until(async () => (await rpc('pty/read', { session })).screen.includes('script-42'), 10_000, "the script's command");
      const viaMcp = (await agent.callTool({ name: 'send', arguments: { session, text: 'echo agent-$((7*7))' } })) as any;
      assert.notEqual(viaMcp.isError, true, toolText(viaMcp));
      // The user's browser view, with its own token (the host's is the agent's here: it used /mcp with it).
      const { token: viewToken } = await rpc('session/share', { session, scope: 'input', reusable: true });
      const ws = await wsConnect(h.port, `/sessions/${session}/stream`, { token: viewToken });
      assert.equal(ws.kind, 'open');
      if (ws.kind !== 'open') return;
      for (const key of 'echo user-$((8*8))\r') ws.client.send({ type: 'write', data: key });
      await until(async () => (await rpc('pty/read', { session })).screen.includes('user-64'), 10_000, "the user's command");
      await ws.client.close();
      const secret = 'hunter2-Dflt';
      await rpc('pty/write', { session, action: { text: 'read -s x; echo "len=${#x}"\r' } });
      await until(async () => (await rpc('pty/info', { session })).secretInput, 10_000, 'the password prompt');
      await rpc('pty/write', { session, action: { text: `${secret}\r` } });
      await until(async () => (await rpc('pty/read', { session })).screen.includes(`len=${secret.length}`), 10_000, 'the secret read');
      await rpc('pty/record', { session, stop: true });

      const events = readCast(file);
      assert.deepEqual(
        events.filter((e) => e[1] === 'i'),
        [],
        'no input text',
      );
      const markers = events.filter((e) => e[1] === 'm').map((e) => e[2]);
      assert.ok(markers.includes(`input from script via control: ${bytes(scriptLine)} bytes`), JSON.stringify(markers));
      assert.ok(
        markers.some((m) => /^input from agent via mcp-http: \d+ bytes$/.test(m)),
        JSON.stringify(markers),
      );
      assert.equal(
        markers.filter((m) => m === 'input from user via ws-stream: 1 byte').length,
        bytes('echo user-$((8*8))\r'),
        'one marker per key the user typed',
      );
      // The password's write is marked as any other: who, how and how many bytes, never what.
      const prompt = markers.indexOf(`input from script via control: ${bytes('read -s x; echo "len=${#x}"\r')} bytes`);
      assert.ok(prompt >= 0, JSON.stringify(markers));
      const typed = markers.slice(prompt + 1).find((m) => m.startsWith('input from'));
      assert.equal(typed, `input from script via control: ${bytes(`${secret}\r`)} bytes`, JSON.stringify(markers));
      assert.ok(!fs.readFileSync(file, 'utf8').includes(secret));
      await rpc('pty/kill', { session });
    },
  );

  test(
    'input: true, a command and its password typed ahead in one write: the command is kept, the password is not',
    { timeout: 60_000, skip: notLinux },
    async () => {
      const session = await integratedBash();
      const file = path.join(tempDir(), 'ahead.cast');
      await rpc('pty/record', { session, path: file, input: true });
      const secret = 'hunter2-Ahead';
      const command = 'read -s x; echo "len=${#x}"\r';
      await rpc('pty/write', { session, action: { text: `${command}${secret}\r` } });
      // The password went in while readline read keys (no CR to LF translation then): read -s has
      // it, and takes it once a line feed ends the line.
      await until(async () => (await rpc('pty/info', { session })).secretInput, 10_000, 'read -s');
      await rpc('pty/write', { session, action: { text: '\n' } });
      await until(async () => (await rpc('pty/read', { session })).screen.includes(`len=${secret.length + 1}`), 10_000, 'the secret read');
      await rpc('pty/record', { session, stop: true });
      assert.ok(!fs.readFileSync(file, 'utf8').includes(secret), 'the password typed ahead is not in the recording');
      const events = readCast(file);
      assert.ok(
        events.some((e) => e[1] === 'i' && e[2] === command),
        JSON.stringify(events.filter((e) => e[1] !== 'o')),
      );
      assert.ok(events.some((e) => e[1] === 'm' && e[2] === `${bytes(`${secret}\r`)} bytes typed ahead withheld (typed by script)`));
      assert.deepEqual(filesHolding(h.dir, secret), []);
      await rpc('pty/kill', { session });
    },
  );

  test(
    '`npm login` asks for its password in raw mode: secret input (info, event, send, agents refused), and nothing of it is recorded',
    { timeout: 120_000, skip: !hasNpm() && 'needs npm' },
    async () => {
      const npmDir = tempDir();
      const session = await integratedBash({
        npm_config_cache: path.join(npmDir, 'cache'),
        npm_config_userconfig: path.join(npmDir, 'npmrc'),
        npm_config_update_notifier: 'false',
        npm_config_fetch_retries: '0',
      });
      await rpc('pty/events', { session });
      const file = path.join(tempDir(), 'npm.cast');
      await rpc('pty/record', { session, path: file, input: true });
      const port = await closedPort();
      await rpc('pty/write', { session, action: { text: `npm login --auth-type=legacy --registry=http://127.0.0.1:${port}/\r` } });
      await until(async () => (await rpc('pty/read', { session })).screen.includes('Username:'), 30_000, "npm's Username prompt");
      assert.equal((await rpc('pty/info', { session })).secretInput, false, 'a user name is not a secret');

      // A script answers the user name; the send returns when npm waits again: for a secret.
      let sent = await rpc('pty/send', { session, text: 'alice-npm', timeout: 30_000 });
      if (sent.waitReason === 'stdin_read' && !/Password:/.test(sent.output)) {
        // npm was seen waiting before it printed its next question (a slow machine): ask again.
        sent = await rpc('pty/send', { session, text: '', submit: false, timeout: 30_000 });
      }
      assert.equal(sent.waitReason, 'secret_input', JSON.stringify(sent));
      assert.match((await rpc('pty/read', { session })).screen, /Password:/);
      assert.equal((await rpc('pty/info', { session })).secretInput, true);
      assert.ok((await rpc('session/list', {})).sessions.find((s: any) => s.id === session).secretInput);
      await until(
        () => notes.some((n) => n.method === 'pty/event' && n.params.session === session && n.params.type === 'secret_input'),
        5000,
        'the secret_input event',
      );

      // An agent may not type there.
      const keys = (await agent.callTool({ name: 'send_keys', arguments: { session, keys: ['x', 'y'] } })) as any;
      assert.equal(keys.isError, true, toolText(keys));
      assert.match(toolText(keys), /asks for a secret/);
      const send = (await agent.callTool({ name: 'send', arguments: { session, text: 'agent-typed' } })) as any;
      assert.equal(send.isError, true, toolText(send));

      // The user types the password key by key, as in a terminal.
      const secret = 'hunter2-Npm';
      for (const key of secret) await rpc('pty/write', { session, action: { text: key } });
      await rpc('pty/write', { session, action: { text: '\r' } });
      await until(
        () => notes.some((n) => n.method === 'pty/event' && n.params.session === session && n.params.type === 'command_finished'),
        60_000,
        'npm login to end',
      );
      await rpc('pty/record', { session, stop: true });

      assert.ok(!fs.readFileSync(file, 'utf8').includes(secret), 'the password is not in the recording');
      const events = readCast(file);
      assert.ok(
        events.some((e) => e[1] === 'i' && e[2].startsWith('alice-npm')),
        'what npm showed (the user name) is kept',
      );
      assert.ok(events.some((e) => e[1] === 'm' && e[2] === 'secret input withheld (typed by script)'));
      const output = await rpc('pty/output', { session, since: 0 });
      assert.ok(!output.data.includes(secret) && !output.data.includes('agent-typed'), 'neither the password nor the agent reached the screen');
      assert.deepEqual(filesHolding(h.dir, secret), [], 'nor any file of the host (records, command logs)');
      await rpc('pty/kill', { session });
    },
  );
});
