import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/*
 * Whether another user could change a file or folder the host writes into or runs commands from,
 * as ssh holds `~/.ssh` to (its StrictModes, with Debian's allowance for a user's private group):
 * the file or folder must be the user's and writable by nobody else, and so must every folder
 * above it be (the user's or root's; writable by others only with the sticky bit, as /tmp, where
 * nobody may move what is not theirs). Writable by the group is fine when the group is the user's
 * own private one (a login's umask 002 makes folders 775 on Debian and Ubuntu). A link on the way
 * is fine when the user or root made it; what it leads to is held to the same.
 */

/** Who may own the path itself: the user alone (a folder written into), or root too (a file only read). */
export type SelfOwner = 'user' | 'user-or-root';

/** What is wrong with a path, and where. */
export interface UnsafePath {
  /** The path at fault: the one asked about, or a folder or link on the way to it. */
  at: string;
  problem: 'writable-by-others' | 'another-users' | 'link-by-another-user' | 'not-a-file-or-folder' | 'link-to-nothing' | 'cannot-examine';
  /** One line: `<at> is writable by others (mode 777)`, `<at> is another user's folder`, … */
  text: string;
}

/**
 * What is unsafe about `p` (unsafePath's `text`), or undefined when nothing is, or when `p` is not
 * there (nothing to judge yet: the caller makes it, then asks again). `kind`: what `p` must be.
 * Undefined too where there are no users (no `process.getuid`).
 */
export function unsafePath(p: string, kind: 'file' | 'folder', selfOwner: SelfOwner = 'user'): UnsafePath | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const full = path.resolve(p);
  try {
    return unsafeLink(full, uid) ?? unsafeTarget(full, kind, uid, selfOwner);
  } catch (e) {
    // A loop of links, a folder we may not enter: said as what it is, never thrown.
    return { at: full, problem: 'cannot-examine', text: `${full} cannot be examined (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  }
}

/** A link on the way to `p` (as named) that another user made; or a folder on the way that is none. */
function unsafeLink(p: string, uid: number): UnsafePath | undefined {
  for (const at of selfAndAncestors(p)) {
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (!st) continue; // not there (yet)
    if (st.isSymbolicLink() && st.uid !== uid && !isRootLike(st.uid)) return { at, problem: 'link-by-another-user', text: `${at} is a link another user made` };
    if (at !== p && !st.isSymbolicLink() && !st.isDirectory()) return { at, problem: 'not-a-file-or-folder', text: `${at} is not a folder` };
  }
  return undefined;
}

/** The first of `p` (as its links lead) and the folders above it that another user could change. */
function unsafeTarget(p: string, kind: 'file' | 'folder', uid: number, selfOwner: SelfOwner): UnsafePath | undefined {
  let real: string;
  try {
    real = fs.realpathSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    // A link to nothing stands where the file or folder would be made.
    if (!fs.lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink()) return undefined;
    return { at: p, problem: 'link-to-nothing', text: `${p} is not a ${kind} (a link to nothing)` };
  }
  for (const at of selfAndAncestors(real)) {
    const st = fs.statSync(at);
    const self = at === real;
    if (self && (kind === 'folder' ? !st.isDirectory() : !st.isFile())) return { at, problem: 'not-a-file-or-folder', text: `${at} is not a ${kind}` };
    const ownerOk = st.uid === uid || (isRootLike(st.uid) && (!self || selfOwner === 'user-or-root'));
    if (!ownerOk) return { at, problem: 'another-users', text: `${at} is another user's ${self && kind === 'file' ? 'file' : 'folder'}` };
    const othersWrite = (st.mode & 0o002) !== 0 || ((st.mode & 0o020) !== 0 && !isOwnPrivateGroup(st.gid));
    if (othersWrite && (self || (st.mode & 0o1000) === 0)) {
      return { at, problem: 'writable-by-others', text: `${at} is writable by others (mode ${(st.mode & 0o7777).toString(8)})` };
    }
  }
  return undefined;
}

/**
 * Root, or how root shows inside a user namespace that does not map it (the kernel's overflow
 * uid, `nobody`: a sandbox's `/` and `/tmp`), which no user of the namespace can act as.
 */
function isRootLike(owner: number): boolean {
  return owner === 0 || owner === unmappedRootShowsAs();
}

let unmapped: number | undefined;
/**
 * The uid that the outside root shows as here: the overflow uid inside a user namespace that does
 * not map root (a sandbox's), -1 where root is mapped (then `nobody` is a user like any other).
 */
function unmappedRootShowsAs(): number {
  if (unmapped === undefined) {
    // Each line of uid_map: first uid inside, first uid outside, how many.
    const maps = readOr('/proc/self/uid_map', '0 0 4294967295')
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/).map(Number));
    const rootMapped = maps.some(([, outside, count]) => outside === 0 && count > 0);
    const overflow = Number(readOr('/proc/sys/kernel/overflowuid', '65534').trim());
    unmapped = rootMapped ? -1 : Number.isInteger(overflow) ? overflow : 65534;
  }
  return unmapped;
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

const privateGroups = new Map<number, boolean>();

/**
 * Whether `gid` is the user's private group (the user's own primary group, named after the user,
 * with no other member listed): then writable by the group is writable by the user alone.
 */
function isOwnPrivateGroup(gid: number): boolean {
  if (gid !== process.getgid?.()) return false;
  let known = privateGroups.get(gid);
  if (known === undefined) {
    let me: string;
    try {
      me = os.userInfo().username;
    } catch {
      return false; // no account has the uid (a container's): no group of its own either
    }
    const r = spawnSync('getent', ['group', String(gid)], { encoding: 'utf8', timeout: 5000 });
    const [name, , , members = ''] = r.status === 0 ? r.stdout.split('\n')[0].split(':') : [];
    known = name === me && members.split(',').every((m) => m === '' || m === me);
    privateGroups.set(gid, known);
  }
  return known;
}

/** What to do about it, in a few words: `chmod go-w <path>` for one others can write; else where to look. */
export function unsafePathAdvice(u: UnsafePath): string {
  switch (u.problem) {
    case 'writable-by-others':
      return `chmod go-w ${u.at}`;
    case 'another-users':
    case 'link-by-another-user':
      return `only you or root may own ${u.at}`;
    case 'not-a-file-or-folder':
    case 'link-to-nothing':
      return `remove or replace ${u.at}`;
    case 'cannot-examine':
      return `check ${u.at}`;
  }
}

/** `p` and each folder above it, up to the root, `p` first. */
function selfAndAncestors(p: string): string[] {
  const out = [p];
  for (let up = path.dirname(p); up !== out[out.length - 1]; up = path.dirname(up)) out.push(up);
  return out;
}
