import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as pty from 'node-pty';
import {
  foregroundProcessGroup,
  foregroundStateOf,
  readinessOf,
  signalForegroundGroup,
  terminalOf,
  type Readiness,
} from '../../../../src/core/process/proc-state';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';
import { ptysKilledAfterSuite } from '../../../helpers/raw-pty';

// Real programs in a real pty. Nothing here asserts timings: every wait polls with small sleeps up to a
// bound, and "while X" samples only count when the foreground group was the same before and after.

const linux = process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64');
const POLL_MS = 20;
const WAIT_MS = 8000;

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'proc-state-test-'));
// The interpreter itself rather than a version-manager shim script, so the foreground job is python.
const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
const open = ptysKilledAfterSuite();

after(() => fs.rmSync(home, { recursive: true, force: true }));
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Shell {
  readonly pid: number;
  readonly pty: pty.IPty;
  output(): string;
  run(line: string): void;
  close(): void;
}

function openShell(file = 'bash'): Shell {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home, // keeps bash/python/less history files out of the real home
    TERM: 'xterm-256color',
    HISTFILE: '/dev/null',
    LESSHISTFILE: '-',
    PS1: '$ ',
  };
  const p = pty.spawn(file, ['--norc', '--noprofile', '-i'], { name: 'xterm-256color', cols: 100, rows: 30, cwd: home, env });
  open.push(p);
  let out = '';
  p.onData((data) => {
    out += data;
  });
  return {
    pid: p.pid,
    pty: p,
    output: () => out,
    run: (line) => p.write(`${line}\r`),
    close: () => {
      try {
        p.kill('SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}

/** Polls `probe` until `accept` holds; fails with the last value after `timeoutMs`. */
async function until<T>(what: string, probe: () => T, accept: (value: T) => boolean, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = probe();
  while (!accept(value)) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await delay(POLL_MS);
    value = probe();
  }
  return value;
}

function comm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

function syscallNr(pid: number): number | null {
  try {
    const n = Number(fs.readFileSync(`/proc/${pid}/syscall`, 'utf8').split(' ')[0]);
    return Number.isInteger(n) ? n : null;
  } catch {
    return null;
  }
}

/** Waits for the shell's own prompt: the shell is the foreground group and reads the terminal. */
async function waitForPrompt(shell: Shell): Promise<void> {
  await until(
    'the shell prompt',
    () => ({ fg: foregroundProcessGroup(shell.pid), readiness: readinessOf(shell.pid) }),
    (v) => v.fg === shell.pid && v.readiness === 'waiting_for_input',
  );
}

/** Waits until the foreground group is a job (not the shell) whose leader runs a program named `name…`. */
async function waitForJob(shell: Shell, name: string): Promise<number> {
  return until(
    `a foreground job running ${name}`,
    () => foregroundProcessGroup(shell.pid),
    (fg) => fg !== null && fg !== shell.pid && comm(fg).startsWith(name),
  ) as Promise<number>;
}

/**
 * Samples readinessOf while the foreground group is `pgid`, for up to `windowMs` or until the job ends;
 * keeps only samples where the group was `pgid` both before and after the call.
 */
async function sampleWhileForeground(shell: Shell, pgid: number, windowMs: number): Promise<Readiness[]> {
  const samples: Readiness[] = [];
  const end = Date.now() + windowMs;
  while (Date.now() < end) {
    const before = foregroundProcessGroup(shell.pid);
    const readiness = readinessOf(shell.pid);
    const afterwards = foregroundProcessGroup(shell.pid);
    if (before !== pgid || afterwards !== pgid) break;
    samples.push(readiness);
    await delay(POLL_MS);
  }
  return samples;
}

async function expectBusyWhile(shell: Shell, pgid: number, windowMs: number): Promise<void> {
  const samples = await sampleWhileForeground(shell, pgid, windowMs);
  assert.ok(samples.length > 0, 'no sample taken while the job was in the foreground');
  assert.deepEqual(new Set(samples), new Set(['busy']), `samples: ${samples.join(',')}`);
}

async function expectWaiting(shell: Shell, pgid: number): Promise<void> {
  await until(
    `job ${pgid} waiting for input`,
    () => ({ fg: foregroundProcessGroup(shell.pid), readiness: readinessOf(shell.pid) }),
    (v) => v.fg === pgid && v.readiness === 'waiting_for_input',
  );
}

/** Runs `line`, waits for its job, asserts it waits for input, then ends it with a real SIGINT. */
async function expectJobWaits(shell: Shell, line: string, name: string): Promise<void> {
  shell.run(line);
  const pgid = await waitForJob(shell, name);
  await expectWaiting(shell, pgid);
  assert.equal(signalForegroundGroup(shell.pid, 'SIGINT').pgid, pgid);
  await waitForPrompt(shell);
}

/**
 * Runs `line`, waits until its job sits in one of `syscalls` (x86_64 and arm64 numbers may both be given)
 * so the interesting state is reached, asserts 'busy' throughout a short window, then ends it.
 */
async function expectJobBusyIn(shell: Shell, line: string, name: string, syscalls: readonly number[]): Promise<void> {
  shell.run(line);
  const pgid = await waitForJob(shell, name);
  await until(
    `${name} blocked in ${syscalls.join('/')}`,
    () => syscallNr(pgid),
    (nr) => nr !== null && syscalls.includes(nr),
  );
  await expectBusyWhile(shell, pgid, 400);
  assert.equal(signalForegroundGroup(shell.pid, 'SIGINT').pgid, pgid);
  await waitForPrompt(shell);
}

/** Waits until the foreground job is `pgid` and /proc reads it as `state`. */
async function untilJobState(shell: Shell, pgid: number, state: string): Promise<void> {
  await until(
    `job ${pgid} ${state}`,
    () => ({ fg: foregroundProcessGroup(shell.pid), state: foregroundStateOf(shell.pid) }),
    (v) => v.fg === pgid && v.state === state,
  );
}

/** A detachable program's job `pgid` relays at its inner prompt and while a command runs inside it; `exit` there gives the shell back. */
async function expectRelaysInside(shell: Shell, pgid: number): Promise<void> {
  await untilJobState(shell, pgid, 'relaying');
  shell.run('sleep 1');
  await delay(200);
  assert.equal(foregroundStateOf(shell.pid), 'relaying');
  shell.run('exit');
  await waitForPrompt(shell);
}

/**
 * A Unix socket server in a process of its own (out of any session's job, and holding none of this
 * test's terminals: it closes what it inherited), in a private folder of its own. It keeps every
 * connection; `hold('open <path>')` has it open a terminal, `hold('pty')` open a terminal's master
 * of its own (as dtach's server), `hold('close')` close what it opened.
 */
async function unixServer(prefix: string): Promise<{ dir: string; serverPath: string; hold(command: string): Promise<void>; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const serverPath = path.join(dir, 'server.sock');
  const program = [
    'import os, select, socket, sys',
    'os.closerange(3, 65536)',
    'l = socket.socket(socket.AF_UNIX); l.bind(sys.argv[1]); l.listen(16)',
    'kept, opened = [], []',
    "print('listening', flush=True)",
    'while True:',
    '    r = select.select([l, sys.stdin], [], [])[0]',
    '    if l in r: kept.append(l.accept()[0])',
    '    if sys.stdin in r:',
    '        words = sys.stdin.readline().split()',
    '        if not words: break',
    "        if words[0] == 'open': opened.append(os.open(words[1], os.O_RDWR | os.O_NOCTTY))",
    "        if words[0] == 'pty': opened.extend(os.openpty())",
    "        if words[0] == 'close':",
    '            for fd in opened: os.close(fd)',
    '            opened = []',
    "        print('ok', flush=True)",
  ].join('\n');
  const server = spawn(python, ['-c', program, serverPath], { stdio: ['pipe', 'pipe', 'inherit'] });
  let said = '';
  const waiters: (() => void)[] = [];
  server.stdout.setEncoding('utf8').on('data', (d: string) => {
    said += d;
    for (let i = said.indexOf('\n'); i >= 0; i = said.indexOf('\n')) {
      said = said.slice(i + 1);
      waiters.shift()?.();
    }
  });
  const nextLine = () => new Promise<void>((resolve) => waiters.push(resolve));
  await nextLine(); // listening
  const hold = async (command: string) => {
    const done = nextLine();
    server.stdin.write(`${command}\n`);
    await done;
  };
  const close = async () => {
    const gone = new Promise((r) => server.once('exit', r));
    server.stdin.end();
    await gone;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { dir, serverPath, hold, close };
}

const SELECT_SYSCALLS = [23, 270, 72]; // select, pselect6 (x86_64); pselect6 (arm64)
const POLL_SYSCALLS = [7, 271, 73]; // poll, ppoll (x86_64); ppoll (arm64)
const EPOLL_SYSCALLS = [232, 281, 441, 22]; // epoll_wait, epoll_pwait, epoll_pwait2 (x86_64); epoll_pwait (arm64)

test('bash at its prompt waits for input; the foreground group is the shell', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    assert.equal(foregroundProcessGroup(shell.pid), shell.pid);
    const tty = terminalOf(shell.pid);
    assert.notEqual(tty, null);
    assert.equal(tty, fs.statSync(`/proc/${shell.pid}/fd/0`).rdev, 'tty_nr compares with fs.Stats.rdev');
  } finally {
    shell.close();
  }
});

test('sleep is busy (asleep in nanosleep, not reading the tty), then the prompt is back', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    shell.run('sleep 2');
    const pgid = await waitForJob(shell, 'sleep');
    assert.notEqual(pgid, shell.pid);
    await expectBusyWhile(shell, pgid, 800);
    await waitForPrompt(shell);
  } finally {
    shell.close();
  }
});

test('cat reading the terminal waits for input', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    shell.run('cat');
    const pgid = await waitForJob(shell, 'cat');
    await expectWaiting(shell, pgid);
    shell.pty.write('\x04'); // EOF ends cat
    await waitForPrompt(shell);
  } finally {
    shell.close();
  }
});

test("python3 -c 'input()' and python3 -i at >>> wait for input", { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    shell.run(`${python} -c 'input()'`);
    let pgid = await waitForJob(shell, 'python');
    await expectWaiting(shell, pgid);
    shell.run('');
    await waitForPrompt(shell);

    shell.run(`${python} -i`);
    pgid = await waitForJob(shell, 'python');
    await until(
      'the >>> prompt',
      () => shell.output(),
      (out) => out.includes('>>>'),
    );
    await expectWaiting(shell, pgid);
    shell.run('exit()');
    await waitForPrompt(shell);
  } finally {
    shell.close();
  }
});

test('less (reading the terminal on another fd, stdin a pipe) waits for input', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    shell.run('echo hello | less');
    const pgid = await until(
      'less in the foreground',
      () => foregroundProcessGroup(shell.pid),
      (fg) => fg !== null && fg !== shell.pid && fs.readdirSync('/proc').some((n) => /^\d+$/.test(n) && comm(Number(n)) === 'less'),
    );
    await expectWaiting(shell, pgid as number);
    shell.pty.write('q');
    await waitForPrompt(shell);
  } finally {
    shell.close();
  }
});

test('a read of /dev/tty (device 5,0, not the pts itself) waits for input', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    await expectJobWaits(shell, `${python} -c 'import os; os.read(os.open("/dev/tty", os.O_RDONLY), 1)' </dev/null`, 'python');
  } finally {
    shell.close();
  }
});

test('a busy loop in the shell itself is busy', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    shell.run('while :; do :; done');
    await until(
      'the loop to start',
      () => readinessOf(shell.pid),
      (r) => r === 'busy',
    );
    for (let i = 0; i < 10; i++) {
      assert.equal(foregroundProcessGroup(shell.pid), shell.pid);
      assert.equal(readinessOf(shell.pid), 'busy');
      await delay(POLL_MS);
    }
    shell.pty.write('\x03'); // the tty's SIGINT breaks the loop
    await waitForPrompt(shell);
  } finally {
    shell.close();
  }
});

test('a pipeline is busy unless all its processes sleep (one not reading the tty, or one computing)', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    shell.run('sleep 1 | cat');
    const pgid = await waitForJob(shell, 'sleep');
    await expectBusyWhile(shell, pgid, 600);
    await waitForPrompt(shell);

    // cat does read the terminal, but the other member of its group computes: not ready.
    shell.run('cat | while :; do :; done');
    const loop = await waitForJob(shell, 'cat');
    await until(
      'cat reading the terminal',
      () => syscallNr(loop),
      (nr) => nr === 0 || nr === 63,
    );
    await expectBusyWhile(shell, loop, 400);
    assert.equal(signalForegroundGroup(shell.pid, 'SIGINT').pgid, loop);
    await waitForPrompt(shell);
  } finally {
    shell.close();
  }
});

test('signalForegroundGroup SIGINT interrupts sleep 100 and returns its group', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    shell.run('sleep 100');
    const pgid = await waitForJob(shell, 'sleep');
    assert.deepEqual(signalForegroundGroup(shell.pid, 'SIGINT'), { pgid });
    await waitForPrompt(shell);
  } finally {
    shell.close();
  }
});

test('signalForegroundGroup works after stty -isig, where Ctrl+C does not', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    shell.run('stty -isig');
    await waitForPrompt(shell);
    shell.run('sleep 100');
    const pgid = await waitForJob(shell, 'sleep');
    shell.pty.write('\x03'); // with -isig this is just a byte of input
    await delay(300);
    assert.equal(foregroundProcessGroup(shell.pid), pgid, 'Ctrl+C must not have interrupted sleep');
    assert.equal(comm(pgid), 'sleep');
    assert.deepEqual(signalForegroundGroup(shell.pid, 'SIGINT'), { pgid });
    await waitForPrompt(shell);
  } finally {
    shell.close();
  }
});

test('select/poll/epoll count only when their set includes the terminal for input', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    // Waits for input on a pipe while holding the terminal on fds 0-2: busy. (The sets are read from the
    // process's memory / the epoll fdinfo; "has the terminal open" alone would say waiting.)
    const pipe = 'import os, select; r, w = os.pipe()';
    await expectJobBusyIn(shell, `${python} -c '${pipe}; select.select([r], [], [], 30)'`, 'python', SELECT_SYSCALLS);
    await expectJobBusyIn(shell, `${python} -c '${pipe}; p = select.poll(); p.register(r, select.POLLIN); p.poll(30000)'`, 'python', POLL_SYSCALLS);
    await expectJobBusyIn(shell, `${python} -c '${pipe}; e = select.epoll(); e.register(r, select.EPOLLIN); e.poll(30)'`, 'python', EPOLL_SYSCALLS);
    // Nothing to wait for at all (a select-based sleep): busy.
    await expectJobBusyIn(shell, `${python} -c 'import select; select.select([], [], [], 30)'`, 'python', SELECT_SYSCALLS);
    // The same calls with stdin (the terminal) registered for input: waiting.
    await expectJobWaits(shell, `${python} -c 'import select, sys; select.select([sys.stdin], [], [], 30)'`, 'python');
    await expectJobWaits(shell, `${python} -c 'import select; p = select.poll(); p.register(0, select.POLLIN); p.poll(30000)'`, 'python');
    await expectJobWaits(shell, `${python} -c 'import select; e = select.epoll(); e.register(0, select.EPOLLIN); e.poll(30)'`, 'python');
  } finally {
    shell.close();
  }
});

test(
  'a wait on the terminal and, with it or in another thread, on an internet socket, the master of another terminal or a Unix socket to a server out of the job relays (ssh, sudo, kubectl, docker): its readiness is unknown; a socket pair, a pipe, or in the same wait a server with neither the terminal nor terminals of its own, still waits for input',
  { skip: !linux && 'needs Linux /proc' },
  async () => {
    const { dir, serverPath, hold, close: closeServer } = await unixServer('spt-relay-');
    const shell = openShell();
    /** Runs `line`, waits until /proc shows its job in `state` (readinessOf then `readiness`), then ends it. */
    const expectState = async (line: string, state: string, readiness: Readiness) => {
      shell.run(line);
      const pgid = await waitForJob(shell, 'python');
      await untilJobState(shell, pgid, state);
      assert.equal(readinessOf(shell.pid), readiness);
      assert.equal(signalForegroundGroup(shell.pid, 'SIGINT').pgid, pgid);
      await waitForPrompt(shell);
    };
    try {
      await waitForPrompt(shell);
      // A TCP connection beside the terminal, as ssh's (here to a listener of its own on 127.0.0.1).
      const tcp = "import socket, select, sys; l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen(1); c = socket.create_connection(l.getsockname())";
      await expectState(`${python} -c "${tcp}; select.select([sys.stdin, c], [], [], 30)"`, 'relaying', 'unknown');
      await expectState(
        `${python} -c "${tcp}; p = select.poll(); p.register(0, select.POLLIN); p.register(c, select.POLLIN); p.poll(30000)"`,
        'relaying',
        'unknown',
      );
      // The master of a terminal of its own, as sudo's (use_pty) and script's.
      await expectState(`${python} -c "import os, select, sys; m, s = os.openpty(); select.select([sys.stdin, m], [], [], 30)"`, 'relaying', 'unknown');
      // A Unix socket pair beside the terminal (an event loop's wake-up): still a program waiting for input.
      await expectState(
        `${python} -c "import socket, select, sys; a, b = socket.socketpair(); e = select.epoll(); e.register(0, select.EPOLLIN); e.register(a, select.EPOLLIN); e.poll(30)"`,
        'waiting_for_input',
        'waiting_for_input',
      );
      // The terminal read by one thread, the connection waited on by another (Go's kubectl exec,
      // docker over TCP): a relay too. A thread waiting on a pipe beside the read is not one.
      const thread = (wait: string) => `import threading, os; threading.Thread(target=lambda: ${wait}, daemon=True).start(); sys.stdin.readline()`;
      await expectState(`${python} -c "${tcp}; ${thread('select.select([c], [], [], 30)')}"`, 'relaying', 'unknown');
      await expectState(`${python} -c "${tcp}; e = select.epoll(); e.register(c, select.EPOLLIN); ${thread('e.poll(30)')}"`, 'relaying', 'unknown');
      await expectState(`${python} -c "import select, sys; ${thread('select.select([os.pipe()[0]], [], [], 30)')}"`, 'waiting_for_input', 'waiting_for_input');
      // A Unix socket to a server out of the job (here this test's own process), waited on by a
      // thread of its own beside the read (Go's docker CLI and its daemon): a relay.
      const unix = `import socket, select, sys; c = socket.socket(socket.AF_UNIX); c.connect('${serverPath}')`;
      await expectState(`${python} -c "${unix}; e = select.epoll(); e.register(c, select.EPOLLIN); ${thread('e.poll(30)')}"`, 'relaying', 'unknown');
      // In the same wait as the terminal, a server that does not have the terminal (vim's X
      // connection, emacs's D-Bus) leaves the program waiting for input; one that has it too makes
      // the program a relay (emacsclient -t).
      await expectState(`${python} -c "${unix}; select.select([sys.stdin, c], [], [], 30)"`, 'waiting_for_input', 'waiting_for_input');
      await hold(`open ${fs.readlinkSync(`/proc/${shell.pid}/fd/0`)}`);
      await expectState(`${python} -c "${unix}; select.select([sys.stdin, c], [], [], 30)"`, 'relaying', 'unknown');
      await hold('close');
      // Or one that runs programs in terminals of its own (holds a master), as dtach's server,
      // to which its client passes what is typed: a relay as well.
      await hold('pty');
      await expectState(`${python} -c "${unix}; select.select([sys.stdin, c], [], [], 30)"`, 'relaying', 'unknown');
      await hold('close');
      // The same socket connected to a server of the program's own: its other end is the job's.
      const own = `import socket, select, sys; l = socket.socket(socket.AF_UNIX); l.bind('${path.join(dir, 'own.sock')}'); l.listen(1); c = socket.socket(socket.AF_UNIX); c.connect(l.getsockname()); a = l.accept()[0]`;
      await expectState(`${python} -c "${own}; select.select([sys.stdin, c], [], [], 30)"`, 'waiting_for_input', 'waiting_for_input');
    } finally {
      shell.close();
      await closeServer();
    }
  },
);

test(
  'a job that waits only on a server which has the terminal open relays (a tmux client: its server reads the terminal); one whose server has not is busy (psql waiting for a query)',
  { skip: !linux && 'needs Linux /proc' },
  async () => {
    const { serverPath, hold, close: closeServer } = await unixServer('spt-handover-');
    const shell = openShell();
    try {
      await waitForPrompt(shell);
      // The program waits on its connection alone, as a client waits for its server's word.
      const line = `${python} -c "import socket, select; c = socket.socket(socket.AF_UNIX); c.connect('${serverPath}'); select.select([c], [], [], 30)"`;
      await expectJobBusyIn(shell, line, 'python', SELECT_SYSCALLS);
      // The server has the terminal open, as tmux's server has its clients' terminals.
      await hold(`open ${fs.readlinkSync(`/proc/${shell.pid}/fd/0`)}`);
      shell.run(line);
      const pgid = await waitForJob(shell, 'python');
      await untilJobState(shell, pgid, 'relaying');
      assert.equal(readinessOf(shell.pid), 'unknown');
      assert.equal(signalForegroundGroup(shell.pid, 'SIGINT').pgid, pgid);
      await waitForPrompt(shell);
      // A wait on nothing beside a terminal held elsewhere is still busy: only a wait on that server relays.
      await expectJobBusyIn(shell, `${python} -c "import select; select.select([], [], [], 30)"`, 'python', SELECT_SYSCALLS);
    } finally {
      shell.close();
      await closeServer();
    }
  },
);

const SIGNAL_WAIT_SYSCALLS = [34, 128, 130, 133, 137]; // pause, rt_sigtimedwait, rt_sigsuspend (x86_64); rt_sigsuspend, rt_sigtimedwait (arm64)

test(
  'a job that waits for signals alone while a process of another session has the terminal open relays (a screen client: its server reads the terminal); with no such process it is busy, at once after one goes',
  { skip: !linux && 'needs Linux /proc' },
  async () => {
    const shell = openShell();
    let tty: number | undefined;
    try {
      await waitForPrompt(shell);
      const line = `${python} -c "import signal; signal.pause()"`;
      await expectJobBusyIn(shell, line, 'python', SIGNAL_WAIT_SYSCALLS);
      // This test's process is of another session; with the terminal open it stands where screen's server does.
      tty = fs.openSync(fs.readlinkSync(`/proc/${shell.pid}/fd/0`), fs.constants.O_RDWR | fs.constants.O_NOCTTY);
      shell.run(line);
      const pgid = await waitForJob(shell, 'python');
      await untilJobState(shell, pgid, 'relaying');
      assert.equal(readinessOf(shell.pid), 'unknown');
      // The holder lets go (screen quits, a new pause starts): busy again at once, not a minute later.
      fs.closeSync(tty);
      tty = undefined;
      assert.equal(foregroundStateOf(shell.pid), 'busy');
      assert.equal(signalForegroundGroup(shell.pid, 'SIGINT').pgid, pgid);
      await waitForPrompt(shell);
    } finally {
      if (tty !== undefined) fs.closeSync(tty);
      shell.close();
    }
  },
);

test(
  'GNU screen inside a session relays, at its prompt and while a command runs in it; quitting it gives the shell back',
  { skip: !linux && 'needs Linux /proc' },
  async () => {
    assert.ok(spawnSync('screen', ['-v']).status !== null, 'GNU screen is not installed (.ci/run installs it: apt-get install screen)');
    const screenDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-screen-'));
    fs.chmodSync(screenDir, 0o700); // screen refuses a socket folder others may enter
    const shell = openShell();
    let server: number | undefined;
    try {
      await waitForPrompt(shell);
      shell.run(`SCREENDIR=${screenDir} screen -q -S spt-test`);
      const pgid = await waitForJob(shell, 'screen');
      // screen's server is its client's child in a session of its own: ended by its pid below, whatever happens.
      server = await until(
        "screen's server",
        () => fs.readdirSync('/proc').find((name) => /^\d+$/.test(name) && fs.existsSync(`/proc/${name}/stat`) && readPpid(name) === pgid),
        (pid) => pid !== undefined,
      ).then(Number);
      await expectRelaysInside(shell, pgid);
    } finally {
      // Still screen's (not a pid the system gave out again after it quit): end it.
      if (server !== undefined && comm(server) === 'screen') tryKill(server);
      shell.close();
      fs.rmSync(screenDir, { recursive: true, force: true });
    }
  },
);

test(
  'dtach inside a session relays, at its inner prompt and while a command runs in it; leaving it gives the shell back',
  { skip: !linux && 'needs Linux /proc' },
  async () => {
    assert.ok(spawnSync('dtach', ['--help']).status !== null, 'dtach is not installed (.ci/run installs it: apt-get install dtach)');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-dtach-'));
    const socket = path.join(dir, 'dtach.sock');
    const shell = openShell();
    try {
      await waitForPrompt(shell);
      shell.run(`dtach -c ${socket} -z bash --norc --noprofile`);
      const pgid = await waitForJob(shell, 'dtach');
      await expectRelaysInside(shell, pgid);
    } finally {
      shell.close();
      // dtach's server, in a session of its own, is found by its socket (this test's alone) and ended by its pid.
      for (const name of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
        let cmdline = '';
        try {
          cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8');
        } catch {
          continue;
        }
        if (cmdline.includes(socket)) tryKill(Number(name));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);

/** The parent pid of process `pid` (field 4 of its stat), or null when it is gone. */
function readPpid(pid: string): number | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** SIGKILL to `pid`, if it still runs. */
function tryKill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

test('multi-threaded node: a timer is busy, reading stdin waits for input', { skip: !linux && 'needs Linux /proc' }, async () => {
  const shell = openShell();
  try {
    await waitForPrompt(shell);
    const node = process.execPath;
    await expectJobBusyIn(shell, `${node} -e 'setTimeout(() => {}, 30000)'`, 'node', EPOLL_SYSCALLS);
    await expectJobWaits(shell, `${node} -e 'process.stdin.once("data", () => process.exit())'`, 'node');
  } finally {
    shell.close();
  }
});

test('comm with spaces and parentheses is parsed correctly', { skip: !linux && 'needs Linux /proc' }, async () => {
  const weird = path.join(home, 'x) 1 2 (y');
  fs.symlinkSync('/bin/bash', weird);
  const shell = openShell(weird);
  try {
    await until(
      'the odd comm',
      () => comm(shell.pid),
      (c) => c === 'x) 1 2 (y',
    );
    await waitForPrompt(shell);
    assert.equal(foregroundProcessGroup(shell.pid), shell.pid);
  } finally {
    shell.close();
  }
});

test('a vanished process gives null/unknown and signalling it does not throw', { skip: !linux && 'needs Linux /proc' }, () => {
  const { pid } = spawnSync('true'); // exited and reaped
  assert.ok(pid !== undefined && pid > 1);
  assert.equal(foregroundProcessGroup(pid), null);
  assert.equal(terminalOf(pid), null);
  assert.equal(readinessOf(pid), 'unknown');
  // SIGCONT: harmless even in the unlikely case the pid was reused already.
  assert.deepEqual(signalForegroundGroup(pid, 'SIGCONT'), { pgid: pid });
  assert.equal(foregroundProcessGroup(-5), null);
  assert.equal(readinessOf(0), 'unknown');
  assert.throws(() => signalForegroundGroup(1, 'SIGCONT'), RangeError);
});
