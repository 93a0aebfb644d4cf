// docs/protocol.md#secret-input at the real password prompts the README names: sudo, passwd and
// ssh (to an sshd of the test's own on 127.0.0.1), each run by a non-root user the test makes, in a
// session that logs in as that user (`su -l`). At each prompt the session says so (pty/info,
// session/list, MCP list_sessions, the secret_input event), an agent's MCP send is refused, the
// user's typing (a script on the control socket) gets through, and a recording made with
// input: true holds no trace of the password.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startHttpHost, type HttpHost, mcpAgent } from '../../../helpers/http';
import { connect, until, clientsClosed } from '../../../helpers/host';
import { LocalUser, localUserSkip } from '../../../helpers/local-user';
import { freePort } from '../../../helpers/protocol';
import type { Notification, RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Per-test bound: finite so a prompt that never comes fails instead of blocking CI. */
const TEST_TIMEOUT = 45_000;
/** The user's password, and the one `passwd` changes it to: neither may appear in any result or recording. */
const PASSWORD = 'Hunter2-Zq9-first';
const NEW_PASSWORD = 'Tr0ub4dor-Xk7-second';
/** Ports tried for sshd before giving up (each one taken by another process in between). */
const PORT_TRIES = 5;

/** An sshd of its own on 127.0.0.1: a generated host key, password login for `user` only. */
class TestSshd {
  private constructor(
    readonly port: number,
    private readonly _proc: ChildProcess,
  ) {}

  static async start(dir: string, user: string): Promise<TestSshd> {
    const key = path.join(dir, 'host_ed25519');
    const gen = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key], { encoding: 'utf8' });
    assert.equal(gen.status, 0, gen.stderr);
    // sshd wants its privilege separation folder (made by the service, which does not run here).
    fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const config = path.join(dir, 'sshd_config');
      fs.writeFileSync(
        config,
        [
          `Port ${port}`,
          'ListenAddress 127.0.0.1',
          `HostKey ${key}`,
          `PidFile ${path.join(dir, 'sshd.pid')}`,
          'PasswordAuthentication yes',
          'KbdInteractiveAuthentication no',
          'PubkeyAuthentication no',
          'UsePAM yes',
          `AllowUsers ${user}`,
          'PermitRootLogin no',
          '',
        ].join('\n'),
      );
      const proc = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const outcome = await until(
        () => (stderr.includes(`Server listening on 127.0.0.1 port ${port}`) ? 'up' : proc.exitCode !== null ? 'failed' : false),
        15_000,
        'sshd to listen',
      );
      if (outcome === 'up') return new TestSshd(port, proc);
      if (attempt >= PORT_TRIES || !/Address already in use/.test(stderr)) throw new Error(`sshd did not start: ${stderr}`);
    }
  }

  /** Stops it by its pid. */
  stop(): void {
    if (this._proc.exitCode === null) this._proc.kill('SIGTERM');
  }
}

const TOOLS = ['sudo', 'passwd', 'ssh', 'ssh-keygen', '/usr/sbin/sshd', 'su'];

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('secret input at real prompts: sudo, passwd, ssh, as a user the test makes', () => {
  let user: LocalUser;
  let sshd: TestSshd | undefined;
  let h: HttpHost;
  let ctl: RpcClient;
  let agent: Client;
  const notes: Notification[] = [];
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-prompts-')));
  /** The password the user has now (passwd changes it). */
  let password = PASSWORD;

  before(async () => {
    if (localUserSkip) return;
    // Tools one can install are never a reason to skip: without them this fails, saying which.
    const missing = TOOLS.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
    assert.deepEqual(missing, [], `install them (apt-get install sudo passwd openssh-server openssh-client): ${missing.join(', ')}`);
    user = LocalUser.create({ password: PASSWORD, shell: '/bin/bash', home: true, groups: ['sudo'] });
    fs.writeFileSync(path.join(user.home, '.bashrc'), "PS1='u> '\nHISTFILE=/dev/null\n");
    sshd = await TestSshd.start(dir, user.name);
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
    ctl.onNotification((n) => notes.push(n));
    agent = await mcpAgent(h, 'prompts-test');
  });

  after(async () => {
    await agent?.close().catch(() => {});
    ctl?.close();
    await h?.close();
    sshd?.stop();
    user?.remove();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);
  const toolText = (r: any) => (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');

  /** A session logged in as the user (`su -l`), at its prompt, recorded with input; its events followed. */
  async function loggedIn(): Promise<{ session: string; cast: string }> {
    const info = await rpc('session/create', { command: 'su', args: ['-l', user.name], cwd: '/', cols: 120, rows: 30 });
    const session: string = info.id;
    await until(async () => (await rpc('pty/read', { session })).screen.trimEnd().endsWith('u>'), 15_000, `${user.name}'s prompt`);
    const whoami = await rpc('pty/send', { session, text: 'id -un', timeout: 15_000 });
    assert.ok(whoami.output.split('\n').includes(user.name), whoami.output);
    const cast = path.join(dir, `${session}.cast`);
    await rpc('pty/record', { session, path: cast, input: true });
    await rpc('pty/events', { session });
    return { session, cast };
  }

  /** The screen once the shell shows its prompt again. */
  function backAtPrompt(session: string, what: string): Promise<string> {
    return until(
      async () => {
        const screen = (await rpc('pty/read', { session })).screen as string;
        return screen.trimEnd().endsWith('u>') && screen;
      },
      20_000,
      what,
    );
  }

  /** The program asks for a secret: every surface says so, and an agent may not type. */
  async function assertAsksForSecret(session: string, results: unknown[]): Promise<void> {
    assert.equal((await rpc('pty/info', { session })).secretInput, true);
    assert.equal((await rpc('session/list', {})).sessions.find((s: any) => s.id === session).secretInput, true);
    const listed = toolText(await agent.callTool({ name: 'list_sessions', arguments: {} }));
    assert.ok(
      listed.split('\n').some((l) => l.startsWith(`${session}  `) && l.includes(' secret-input ')),
      listed,
    );
    await until(
      () => notes.some((n) => n.method === 'pty/event' && n.params.session === session && n.params.type === 'secret_input'),
      10_000,
      'the secret_input event',
    );
    const sent = (await agent.callTool({ name: 'send', arguments: { session, text: 'agent-typed' } })) as any;
    results.push(sent);
    assert.equal(sent.isError, true, toolText(sent));
    assert.match(toolText(sent), /asks for a secret/);
    assert.equal((await rpc('pty/info', { session })).secretInput, true, 'nothing the agent sent reached the prompt');
  }

  /** Nothing the session gives out, nor its recording, holds either password. */
  async function assertNoTrace(session: string, cast: string, results: unknown[]): Promise<void> {
    await rpc('pty/record', { session, stop: true });
    results.push(await rpc('pty/output', { session, since: 0 }), await rpc('pty/scrollback', { session }), await rpc('pty/info', { session }), notes);
    const recording = fs.readFileSync(cast, 'utf8');
    assert.match(recording, /secret input withheld \(typed by script\)/, 'the recording marks where the secret was typed');
    for (const secret of [PASSWORD, NEW_PASSWORD]) {
      // A part long enough to be no accident, in case the text was cut or split up.
      for (const text of [secret, secret.slice(0, 8), secret.slice(-8)]) {
        assert.ok(!recording.includes(text), `the recording holds ${text}`);
        for (const r of results) assert.ok(!JSON.stringify(r).includes(text), `a result holds ${text}: ${JSON.stringify(r).slice(0, 300)}`);
      }
    }
    await rpc('pty/kill', { session });
  }

  test(
    "sudo -k; sudo sh -c …: the [sudo] prompt is secret input; the user's password gets through",
    { skip: localUserSkip, timeout: TEST_TIMEOUT },
    async () => {
      const { session, cast } = await loggedIn();
      const results: unknown[] = [];
      // The command sudo runs is silent a while before it prints: sudo waits on the terminal meanwhile.
      const asked = await rpc('pty/send', { session, text: "sudo -k; sudo sh -c 'sleep 2; echo sudo-ran-$((6*7))'", timeout: 20_000 });
      results.push(asked);
      assert.equal(asked.waitReason, 'secret_input', JSON.stringify(asked));
      assert.match((await rpc('pty/read', { session })).screen, new RegExp(`\\[sudo\\] password for ${user.name}:`));
      await assertAsksForSecret(session, results);
      const typed = await rpc('pty/send', { session, text: password, timeout: 20_000 });
      results.push(typed);
      // sudo (use_pty) relays the terminal to the command it runs, in a terminal of its own: it waits
      // on this one whatever the command does, so that wait is no sign of the command being ready.
      // The send never says stdin_read before the command's output (docs/guarantees.md#send-readiness).
      assert.ok(
        typed.waitReason === 'inferred_idle' || (typed.waitReason === 'stdin_read' && typed.output.split('\n').includes('sudo-ran-42')),
        JSON.stringify(typed),
      );
      const screen = await backAtPrompt(session, 'sudo to run the command and end');
      assert.ok(screen.split('\n').includes('sudo-ran-42'), screen);
      assert.equal((await rpc('pty/info', { session })).secretInput, false);
      await assertNoTrace(session, cast, results);
    },
  );

  test("ssh user@127.0.0.1: the password prompt is secret input; the user's password logs in", { skip: localUserSkip, timeout: TEST_TIMEOUT }, async () => {
    const { session, cast } = await loggedIn();
    const results: unknown[] = [];
    // The remote command is silent a while before it prints: ssh waits on the terminal meanwhile.
    const ssh = `ssh -p ${sshd!.port} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o PreferredAuthentications=password ${user.name}@127.0.0.1 'sleep 2; echo ssh-ran-as-$(id -un)'`;
    const asked = await rpc('pty/send', { session, text: ssh, timeout: 20_000 });
    results.push(asked);
    assert.equal(asked.waitReason, 'secret_input', JSON.stringify(asked));
    assert.match((await rpc('pty/read', { session })).screen, new RegExp(`${user.name}@127\\.0\\.0\\.1's password:`));
    await assertAsksForSecret(session, results);
    const typed = await rpc('pty/send', { session, text: password, timeout: 20_000 });
    results.push(typed);
    // ssh waits on the terminal as well as on its connection, whatever the remote command does: the
    // send never says stdin_read before the remote output (docs/guarantees.md#send-readiness).
    assert.ok(
      typed.waitReason === 'inferred_idle' || (typed.waitReason === 'stdin_read' && typed.output.split('\n').includes(`ssh-ran-as-${user.name}`)),
      JSON.stringify(typed),
    );
    const screen = await backAtPrompt(session, 'ssh to run the command and end');
    assert.ok(screen.split('\n').includes(`ssh-ran-as-${user.name}`), screen);
    assert.equal((await rpc('pty/info', { session })).secretInput, false);
    await assertNoTrace(session, cast, results);
  });

  test(
    'passwd: the current, new and retyped password prompts are each secret input; the password changes',
    { skip: localUserSkip, timeout: TEST_TIMEOUT },
    async () => {
      const { session, cast } = await loggedIn();
      const results: unknown[] = [];
      const shadowHash = () => spawnSync('getent', ['shadow', user.name], { encoding: 'utf8' }).stdout.split(':')[1]!;
      const before = shadowHash();
      const asked = await rpc('pty/send', { session, text: 'passwd', timeout: 20_000 });
      results.push(asked);
      assert.equal(asked.waitReason, 'secret_input', JSON.stringify(asked));
      assert.match((await rpc('pty/read', { session })).screen, /Current password:\s*$/);
      await assertAsksForSecret(session, results);
      const current = await rpc('pty/send', { session, text: password, timeout: 20_000 });
      results.push(current);
      assert.equal(current.waitReason, 'secret_input', JSON.stringify(current));
      assert.match((await rpc('pty/read', { session })).screen, /New password:\s*$/);
      await assertAsksForSecret(session, results);
      const fresh = await rpc('pty/send', { session, text: NEW_PASSWORD, timeout: 20_000 });
      results.push(fresh);
      assert.equal(fresh.waitReason, 'secret_input', JSON.stringify(fresh));
      assert.match((await rpc('pty/read', { session })).screen, /Retype new password:\s*$/);
      const again = await rpc('pty/send', { session, text: NEW_PASSWORD, timeout: 20_000 });
      results.push(again);
      assert.equal(again.waitReason, 'stdin_read', JSON.stringify(again));
      assert.match(again.output, /password updated successfully/);
      password = NEW_PASSWORD;
      // The change is real: the user's shadow entry holds another hash.
      assert.ok(before.startsWith('$') && shadowHash().startsWith('$') && shadowHash() !== before, 'passwd changed the hash');
      await assertNoTrace(session, cast, results);
    },
  );
});
