// A local user of its own for a test (an attacker, or the person at a password prompt): made with
// `useradd`, removed with `userdel` afterwards. Needs root on Linux.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';

/** Why a test cannot make a local user here (false: it can): root on Linux, with useradd, userdel, runuser and chpasswd. */
export const localUserSkip: string | false = (() => {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'needs root on Linux to make a second local user';
  for (const tool of ['useradd', 'userdel', 'runuser', 'chpasswd']) if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `needs ${tool}`;
  return false;
})();

/** How many times to retry useradd/userdel while another suite holds /etc/passwd's lock. */
const LOCK_ATTEMPTS = 20;

export interface LocalUserOptions {
  /** Its password (set with chpasswd); none: it cannot log in with one. */
  password?: string;
  /** Its login shell; default /usr/sbin/nologin. */
  shell?: string;
  /** Make a home folder (from /etc/skel), removed with the user. */
  home?: boolean;
  /** Supplementary groups (`sudo`: it may use sudo with its password). */
  groups?: string[];
}

/** A local user made by `useradd` for one test run; `remove()` deletes it (and its home, sudo's notes of it). */
export class LocalUser {
  private constructor(
    readonly name: string,
    readonly uid: number,
    readonly home: string,
  ) {}

  static create(opts: LocalUserOptions = {}, prefix = 'sptusr'): LocalUser {
    const name = `${prefix}${crypto.randomBytes(4).toString('hex')}`;
    const args = [opts.home ? '-m' : '-M', '-s', opts.shell ?? '/usr/sbin/nologin', ...(opts.groups?.length ? ['-G', opts.groups.join(',')] : []), name];
    // Other suites may add users at the same moment: /etc/passwd is locked meanwhile, so try again.
    for (let attempt = 0; ; attempt++) {
      const r = spawnSync('useradd', args, { encoding: 'utf8' });
      if (r.status === 0) break;
      if (attempt >= LOCK_ATTEMPTS) throw new Error(`useradd ${name}: ${r.stderr}`);
      spawnSync('sleep', ['0.2']);
    }
    const user = new LocalUser(
      name,
      Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout.trim()),
      spawnSync('sh', ['-c', `getent passwd ${name} | cut -d: -f6`], { encoding: 'utf8' }).stdout.trim(),
    );
    if (opts.password !== undefined) {
      const r = spawnSync('chpasswd', [], { input: `${name}:${opts.password}\n`, encoding: 'utf8' });
      if (r.status !== 0) {
        user.remove();
        throw new Error(`chpasswd ${name}: ${r.stderr}`);
      }
    }
    return user;
  }

  /** Runs a shell script as this user (synchronously: an in-process host waits meanwhile). */
  run(script: string): void {
    const r = spawnSync('runuser', ['-u', this.name, '--', 'sh', '-euc', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, `as ${this.name}: ${script}\n${r.stderr}`);
  }

  /** Deletes the user, its home and mail, and what sudo noted about it; safe to call twice. */
  remove(): void {
    // 8: a process of the user still runs (a session closing): it ends soon, try again.
    for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
      const r = spawnSync('userdel', ['-r', this.name], { encoding: 'utf8' });
      // 6: no such user (removed already); 12: it had no home or mail to remove, the user is gone.
      if (r.status === 0 || r.status === 6 || r.status === 12) break;
      spawnSync('sleep', ['0.2']);
    }
    for (const dir of ['/var/lib/sudo/lectured', '/run/sudo/ts']) spawnSync('rm', ['-f', `${dir}/${this.name}`]);
  }
}
