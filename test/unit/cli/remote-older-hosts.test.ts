// docs/hosts.md#remote-hosts and docs/cli.md#list: a remote host of another (older) version of
// Shared PTY, which describes its sessions with fewer fields or does not know a method the CLI
// calls, is listed and named as such; it never takes this machine's sessions down with it, and no
// line names a JSON-RPC method. The far end is a small JSON-RPC responder behind a real bridge
// command (`node -e`), beside a real `shared-pty serve` host on this machine; the built CLI runs as
// users run it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionInfo } from '../../../src/core/methods/types';
import { runCli, startServeHost, startedPids, stopPid, type CliResult, type ServeHost } from '../../helpers/cli';
import { tempRuntimeDir } from '../../helpers/host';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { bashEnv, buildCli, CLI } from '../../helpers/protocol';

/** What an older host lists: a bare session, one without its command, one without its client count. */
const OLD_SESSIONS = [
  { id: 'abc123', name: 'oldsess' },
  { id: 'def456', name: 'nocmd', args: ['-l'], running: true },
  { id: 'ghi789', name: 'noclients', command: 'bash', args: [], running: true, cols: 80, rows: 24, origin: 'user', address: '/far/ghi789.sock' },
];

/**
 * A bridge command whose far end answers `host/info`, `session/list` with `sessions` (when given),
 * and "Method not found" (-32601) for anything else, as a host that predates the method does.
 */
function olderBridge(sessions?: object[]): string {
  const script =
    'require("readline").createInterface({ input: process.stdin }).on("line", (l) => { const m = JSON.parse(l); ' +
    'const answer = (o) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, ...o }) + "\\n"); ' +
    `const sessions = ${JSON.stringify(sessions ?? null)}; ` +
    'if (m.method === "host/info") answer({ result: { hostId: "hold1" } }); ' +
    'else if (m.method === "session/list" && sessions) answer({ result: { sessions } }); ' +
    'else answer({ error: { code: -32601, message: "Method not found: " + m.method } }); })';
  return `${JSON.stringify(process.execPath)} -e '${script}'`;
}

const dirs: string[] = [];
let serve: ServeHost;
/** This machine's session, listed beside the remote ones. */
let localId: string;
let runtime: string;

function dir(): string {
  const d = tempRuntimeDir();
  dirs.push(d);
  return d;
}

/** The environment with a hosts.json naming `hosts`. */
function withHosts(hosts: Record<string, string>): NodeJS.ProcessEnv {
  const config = dir();
  fs.mkdirSync(path.join(config, 'shared-pty'));
  fs.writeFileSync(path.join(config, 'shared-pty', 'hosts.json'), JSON.stringify({ hosts }));
  return bashEnv({ SHARED_PTY_DIR: runtime, XDG_CONFIG_HOME: config });
}

/** A one-line error on stderr, nothing on stdout, exit 1: its line. */
function oneLineError(r: CliResult, what: string): string {
  assert.equal(r.code, 1, `${what}: exit 1, got ${r.code}; stderr: ${r.stderr}; stdout: ${r.stdout}`);
  assert.equal(r.stdout, '', `${what}: nothing on stdout`);
  assert.match(r.stderr, /^shared-pty: [^\n]+\n$/, `${what}: one line on stderr`);
  return r.stderr;
}

before(async () => {
  buildCli();
  runtime = dir();
  serve = await startServeHost(['--cmd', 'cat', '--name', 'here-1', '--no-http'], bashEnv({ SHARED_PTY_DIR: runtime }));
  localId = serve.record.sessions[0].id;
});

after(async () => {
  await serve?.stop();
  for (const pid of startedPids) await stopPid(pid);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('a remote host of an older version', { timeout: 60_000 }, () => {
  test("list shows its sessions with what they lack filled in as not known there, beside this machine's; --json too", async () => {
    const env = withHosts({ old: olderBridge(OLD_SESSIONS) });
    const listed = await runCli(['list'], env);
    assert.equal(listed.code, 0, `exit 0; stderr: ${listed.stderr}`);
    assert.equal(listed.stderr, '');
    const rows = listed.stdout.trimEnd().split('\n');
    assert.match(rows[0], /^ID\s+NAME\s+STATE/);
    assert.match(listed.stdout, new RegExp(`^${localId}\\s+here-1\\s+running\\s+100x30\\s+\\d+\\s+user\\s+cat\\s`, 'm'), "this machine's session as usual");
    assert.match(listed.stdout, /^old:abc123\s+oldsess\s+running\s/m);
    assert.match(listed.stdout, /^old:def456\s+nocmd\s+running\s.*\s-l\s/m);
    assert.match(listed.stdout, /^old:ghi789\s+noclients\s+running\s+80x24\s+0\s+user\s+bash\s+\/far\/ghi789\.sock$/m);
    assert.doesNotMatch(listed.stdout, /undefined|null|NaN/, 'no field shows as missing');

    const json = await runCli(['list', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const sessions = JSON.parse(json.stdout) as Array<SessionInfo & { hostId: string }>;
    const local = sessions.find((s) => s.id === localId);
    assert.ok(local, "this machine's session is listed");
    const fields = Object.keys(local).filter((k) => k !== 'tcp' && k !== 'stream');
    for (const id of ['abc123', 'def456', 'ghi789']) {
      const s = sessions.find((x) => x.id === id);
      assert.ok(s, `${id} is listed`);
      assert.deepEqual(Object.keys(s).sort(), [...fields, 'host'].sort(), `${id} has every field of a SessionInfo`);
      assert.equal(s.host, 'old');
      assert.equal(s.hostId, 'hold1');
    }
    const bare = sessions.find((x) => x.id === 'abc123')!;
    assert.deepEqual(
      [bare.pid, bare.command, bare.args, bare.clients, bare.secretInput, bare.integration, bare.exitCode, bare.workspace],
      [0, '', [], 0, false, false, null, null],
      'what it does not say is filled in as not known there, as shared-pty mcp does',
    );
    const kept = sessions.find((x) => x.id === 'ghi789')!;
    assert.deepEqual([kept.command, kept.cols, kept.origin, kept.address], ['bash', 80, 'user', '/far/ghi789.sock'], 'what it says is kept');
  });

  test('a method it does not know is said naming the host, never the method: list (the others still listed), open, read, send, kill', async () => {
    const env = withHosts({ old: olderBridge(OLD_SESSIONS), err: olderBridge() });
    const refusal = (host: string) => `shared-pty: host "${host}" does not know this command (an older version of Shared PTY there?)\n`;
    const listed = await runCli(['list'], env);
    assert.equal(listed.code, 1, `a host that cannot list makes list fail; stderr: ${listed.stderr}`);
    assert.equal(listed.stderr, refusal('err'), 'one line, naming the host');
    assert.match(listed.stdout, new RegExp(`^${localId}\\s+here-1\\s`, 'm'), "this machine's sessions are listed");
    assert.match(listed.stdout, /^old:abc123\s+oldsess\s/m, "the other host's sessions are listed");
    const cases: Array<[string[], string]> = [
      [['open', '--host', 'err'], 'err'],
      [['read', 'old:oldsess'], 'old'],
      [['send', 'old:nocmd', 'true', '--timeout', '2000'], 'old'],
      [['kill', 'old:abc123'], 'old'],
      [['read', 'err:x'], 'err'],
    ];
    for (const [args, host] of cases) {
      const line = oneLineError(await runCli(args, env), args.join(' '));
      assert.equal(line, refusal(host), args.join(' '));
    }
    // shared-pty mcp's tools say it the same way (they named the method: an outside audit).
    const agent = new Client({ name: 'older-hosts', version: '0.0.0' });
    await agent.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: env as Record<string, string>, stderr: 'pipe' }));
    try {
      for (const [tool, args] of [
        ['read_screen', { session: 'old:oldsess' }],
        ['send', { session: 'old:nocmd', text: 'true', timeout: 2000 }],
      ] as const) {
        const r = (await agent.callTool({ name: tool, arguments: args })) as { isError?: boolean; content: Array<{ text: string }> };
        assert.equal(r.isError, true, tool);
        assert.match(r.content[0].text, /host "old" does not know this command \(an older version of Shared PTY there\?\)/, tool);
        assert.doesNotMatch(r.content[0].text, /pty\//, `${tool}: no JSON-RPC method named`);
      }
    } finally {
      await agent.close();
    }
  });
});
