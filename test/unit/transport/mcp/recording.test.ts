// docs/protocol.md#ptyrecord, recording and attribution: a real bash with shell integration, in a real host,
// recorded with `pty/record` while a script (JSON-RPC) and an agent (MCP over /mcp, the SDK's
// client) type into it; the file is read back as asciicast v3 and replayed with `shared-pty play`.
// `pty/info.lastInput` names who wrote last.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startHttpHost, wsConnect, type HttpHost, mcpAgent } from '../../../helpers/http';
import { BASH, connect, rejectsWith, until, clientsClosed } from '../../../helpers/host';
import { runCli } from '../../../helpers/cli';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const linux = process.platform === 'linux';
/** Typed at `read -s`: it must appear nowhere in the recording. */
const SECRET = 'hunter2-Rec7';

type Event = [number, string, string];

/** The header and events of an asciicast v3 file, every line checked to be JSON of the right shape. */
function readCast(file: string): { header: any; events: Event[] } {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  assert.equal(lines.pop(), '', 'the file ends with a newline');
  const header = JSON.parse(lines[0]);
  const events = lines.slice(1).map((l) => JSON.parse(l) as Event);
  for (const e of events) {
    assert.ok(
      Array.isArray(e) && e.length === 3 && typeof e[0] === 'number' && e[0] >= 0 && 'oirmx'.includes(e[1]) && typeof e[2] === 'string',
      JSON.stringify(e),
    );
  }
  return { header, events };
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('recording a session (pty/record) and who typed (pty/info.lastInput)', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  let agent: Client;
  const dirs: string[] = [];
  const tempDir = () => {
    const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-rec-')));
    dirs.push(d);
    return d;
  };

  before(async () => {
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
    agent = await mcpAgent(h, 'record-test');
  });

  after(async () => {
    await agent?.close().catch(() => {});
    ctl?.close();
    await h?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);

  /** An interactive bash (shell integration injected) in a HOME of its own, at its first prompt. */
  async function integratedBash(): Promise<{ session: string; home: string }> {
    const home = tempDir();
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='rec> '\nHISTFILE=/dev/null\n");
    const info = await rpc('session/create', { command: 'bash', args: [], cwd: home, env: { HOME: home }, cols: 100, rows: 30 });
    assert.equal(info.integration, true);
    await until(async () => (await rpc('pty/read', { session: info.id })).screen.trimEnd().endsWith('rec>'), 15_000, 'the first prompt');
    return { session: info.id, home };
  }

  test(
    'the file is asciicast v3: output exactly as pty/output, input with who typed it, resize, command exit codes, exit, no secret; play replays it',
    { timeout: 90_000, skip: !linux && 'secret input needs Linux /proc' },
    async () => {
      const { session, home } = await integratedBash();
      assert.equal((await rpc('pty/info', { session })).lastInput, null, 'nobody has typed yet');

      const file = path.join(tempDir(), 'demo.cast');
      const started = await rpc('pty/record', { session, path: file, input: true });
      assert.deepEqual(started, { recording: true, path: file, cursor: started.cursor, input: true });
      assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'only the user can read a recording');
      await rejectsWith(rpc('pty/record', { session, path: path.join(home, 'other.cast') }), -32000);

      // A script types (JSON-RPC on the control socket): a command that fails with 3.
      const sent = await rpc('pty/send', { session, text: 'echo script-$((6*7)); (exit 3)', timeout: 20_000 });
      assert.equal(sent.exitCode, 3);
      const scriptInput = (await rpc('pty/info', { session })).lastInput;
      assert.equal(scriptInput.origin, 'script');
      assert.equal(scriptInput.transport, 'control');
      assert.ok(Math.abs(Date.parse(scriptInput.at) - Date.now()) < 60_000, scriptInput.at);

      // An agent types (MCP send over /mcp).
      const viaMcp = (await agent.callTool({ name: 'send', arguments: { session, text: 'echo agent-$((7*7))' } })) as any;
      assert.notEqual(viaMcp.isError, true, JSON.stringify(viaMcp));
      const agentInput = (await rpc('pty/info', { session })).lastInput;
      assert.deepEqual([agentInput.origin, agentInput.transport], ['agent', 'mcp-http']);

      // The user types in the browser view (the stream WebSocket), with the view's own token (the
      // host's is the agent's here: it used /mcp with it).
      const { token: viewToken } = await rpc('session/share', { session, scope: 'input', reusable: true });
      const ws = await wsConnect(h.port, `/sessions/${session}/stream`, { token: viewToken });
      assert.equal(ws.kind, 'open');
      if (ws.kind !== 'open') return;
      ws.client.send({ type: 'write', data: 'echo user-$((8*8))\r' });
      await until(async () => (await rpc('pty/read', { session })).screen.includes('user-64'), 10_000, "the user's command");
      const userInput = (await rpc('pty/info', { session })).lastInput;
      assert.deepEqual([userInput.origin, userInput.transport], ['user', 'ws-stream']);
      await ws.client.close();

      await rpc('pty/resize', { session, cols: 90, rows: 20 });

      // A password prompt: what is typed there is withheld.
      await rpc('pty/write', { session, action: { text: 'read -s x; echo "len=${#x}"\r' } });
      await until(async () => (await rpc('pty/info', { session })).secretInput, 10_000, 'the secret prompt');
      await rpc('pty/write', { session, action: { text: `${SECRET}\r` } });
      await until(async () => (await rpc('pty/read', { session })).screen.includes(`len=${SECRET.length}`), 10_000, 'the secret read');

      await rpc('pty/write', { session, action: { text: 'exit 5\r' } });
      await until(async () => !(await rpc('pty/status', { session })).running, 10_000, 'the exit');
      const stopped = await rpc('pty/record', { session, stop: true });
      assert.equal(stopped.recording, false);
      assert.equal(stopped.path, file);

      const raw = fs.readFileSync(file, 'utf8');
      assert.ok(!raw.includes(SECRET), 'the secret is nowhere in the file');
      const { header, events } = readCast(file);
      assert.equal(header.version, 3);
      assert.deepEqual([header.term.cols, header.term.rows], [100, 30], 'the size when recording started');

      const output = events
        .filter((e) => e[1] === 'o')
        .map((e) => e[2])
        .join('');
      const ring = await rpc('pty/output', { session, since: started.cursor });
      assert.equal(output, ring.data, 'the o events are the output since the start cursor, byte for byte');
      assert.match(output, /script-42/);
      assert.match(output, /agent-49/);

      const markers = events.filter((e) => e[1] === 'm').map((e) => e[2]);
      const inputs = events
        .filter((e) => e[1] === 'i')
        .map((e) => e[2])
        .join('');
      assert.match(inputs, /echo script-\$\(\(6\*7\)\); \(exit 3\)\r/);
      assert.match(inputs, /echo agent-\$\(\(7\*7\)\)\r/);
      /** The marker in force where an input event containing `text` is. */
      const markerBefore = (text: string) => {
        const at = events.findIndex((e) => e[1] === 'i' && e[2].includes(text));
        assert.ok(at > 0, `an i event with ${text}`);
        return events
          .slice(0, at)
          .reverse()
          .find((e) => e[1] === 'm' && e[2].startsWith('input from'))?.[2];
      };
      assert.equal(markerBefore('echo script-'), 'input from script via control');
      assert.equal(markerBefore('echo agent-'), 'input from agent via mcp-http');
      assert.equal(markerBefore('echo user-'), 'input from user via ws-stream');
      assert.ok(markers.includes('command exited 3: echo script-$((6*7)); (exit 3)'), JSON.stringify(markers));
      const marked = events.findIndex((e) => e[1] === 'm' && e[2].startsWith('command exited 3'));
      const printed = events.findIndex((e) => e[1] === 'o' && e[2].includes('\x1b]633;D;3'));
      assert.ok(printed >= 0 && marked > printed, 'the marker follows the output where the shell reported the end');
      assert.ok(markers.includes('command exited 0: echo agent-$((7*7))'), JSON.stringify(markers));
      assert.ok(markers.includes('secret input withheld (typed by script)'), JSON.stringify(markers));
      assert.deepEqual(
        events.filter((e) => e[1] === 'r').map((e) => e[2]),
        ['90x20'],
      );
      assert.deepEqual(events.at(-1)!.slice(1), ['x', '5'], 'the exit is the last event');

      // Replayed at a thousand times the speed: the terminal gets exactly the recorded output.
      const played = await runCli(['play', file, '--speed', '1000'], process.env);
      assert.equal(played.code, 0, played.stderr);
      assert.equal(played.stdout, output);
    },
  );

  test(
    'without a path it records into a new 0600 file under $XDG_DATA_HOME/shared-pty/recordings; stop says which; bad requests are refused clearly',
    { timeout: 30_000 },
    async () => {
      const data = tempDir();
      const saved = process.env.XDG_DATA_HOME;
      process.env.XDG_DATA_HOME = data;
      try {
        const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24 });
        const session = info.id;
        const idle = await rpc('pty/record', { session, stop: true });
        assert.deepEqual([idle.recording, idle.path], [false, null], 'stopping when nothing records says so');
        const r = await rpc('pty/record', { session });
        const dir = path.join(data, 'shared-pty', 'recordings');
        assert.equal(path.dirname(r.path), dir);
        assert.match(path.basename(r.path), /\.cast$/);
        assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
        assert.equal(fs.statSync(r.path).mode & 0o777, 0o600);
        await rpc('pty/send', { session, text: 'echo default-place', timeout: 20_000 });
        const stopped = await rpc('pty/record', { session, stop: true });
        assert.equal(stopped.path, r.path);
        assert.match(
          readCast(r.path)
            .events.filter((e) => e[1] === 'o')
            .map((e) => e[2])
            .join(''),
          /default-place/,
        );
        // A file that exists is never overwritten; a folder that does not exist is named.
        await rejectsWith(rpc('pty/record', { session, path: r.path }), -32000);
        const missing = await rejectsWith(rpc('pty/record', { session, path: path.join(data, 'no', 'such', 'x.cast') }), -32000);
        assert.match(missing.message, /folder does not exist/);
        await rejectsWith(rpc('pty/record', { session, path: 'x.cast', stop: true }), -32602);
        await rpc('pty/kill', { session });
      } finally {
        if (saved === undefined) delete process.env.XDG_DATA_HOME;
        else process.env.XDG_DATA_HOME = saved;
      }
    },
  );

  test(
    "a recordings folder that was there already is used only when it is yours alone: writable by others, another user's, or another user's link is refused",
    { timeout: 30_000, skip: process.getuid?.() !== 0 && 'needs root to hand a folder to another user' },
    async () => {
      const data = tempDir();
      const saved = process.env.XDG_DATA_HOME;
      process.env.XDG_DATA_HOME = data;
      const dir = path.join(data, 'shared-pty', 'recordings');
      const NOBODY = 65534;
      try {
        const session = (await rpc('session/create', { ...BASH, cols: 80, rows: 24 })).id;
        const refused = async (why: RegExp) => {
          const e = await rejectsWith(rpc('pty/record', { session }), -32000);
          assert.match(e.message, why);
          assert.deepEqual(fs.readdirSync(dir), [], 'nothing was written there');
        };
        fs.mkdirSync(dir, { recursive: true });
        fs.chmodSync(dir, 0o777);
        await refused(/recordings is writable by others \(mode 777\)/);
        fs.chmodSync(dir, 0o700);
        fs.chownSync(dir, NOBODY, NOBODY);
        await refused(/recordings is another user's folder/);
        // A link to a folder of one's own, but planted by someone else.
        const own = path.join(data, 'own');
        fs.mkdirSync(own, { mode: 0o700 });
        fs.rmSync(dir, { recursive: true });
        fs.symlinkSync(own, dir);
        fs.lchownSync(dir, NOBODY, NOBODY);
        await refused(/recordings is a link another user made/);
        // The same link made by the user is theirs to make: it is used.
        fs.lchownSync(dir, 0, 0);
        const r = await rpc('pty/record', { session });
        assert.equal(path.dirname(r.path), dir);
        await rpc('pty/record', { session, stop: true });
        assert.equal(fs.readdirSync(own).length, 1, 'the recording is in the folder the link names');
        // A folder above it that another user has (they could move the recordings away), or that
        // others may write (not sticky): refused, named (found by an audit of the first fix).
        fs.rmSync(dir);
        fs.mkdirSync(dir, { mode: 0o700 });
        const parent = path.dirname(dir);
        fs.chownSync(parent, NOBODY, NOBODY);
        await refused(/shared-pty is another user's folder/);
        fs.chownSync(parent, 0, 0);
        fs.chmodSync(parent, 0o777);
        await refused(/shared-pty is writable by others \(mode 777\)/);
        fs.chmodSync(parent, 0o700);
        // Something that is no folder in its place: said as what it is, not as a recording that exists.
        fs.rmSync(dir, { recursive: true });
        fs.writeFileSync(dir, '');
        const file = await rejectsWith(rpc('pty/record', { session }), -32000);
        assert.match(file.message, /recordings is not a folder/);
        fs.rmSync(dir);
        fs.symlinkSync(path.join(data, 'nowhere'), dir);
        const dangling = await rejectsWith(rpc('pty/record', { session }), -32000);
        assert.match(dangling.message, /recordings is not a folder \(a link to nothing\)/);
        await rpc('pty/kill', { session });
      } finally {
        if (saved === undefined) delete process.env.XDG_DATA_HOME;
        else process.env.XDG_DATA_HOME = saved;
      }
    },
  );
});
