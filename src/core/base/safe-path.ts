import * as fs from 'node:fs';
import * as path from 'node:path';

/*
 * Whether another user could change a file or folder the host writes into or runs commands from,
 * as ssh holds `~/.ssh` to (its StrictModes): the file or folder must be the user's and writable
 * by nobody else, and so must every folder above it be (the user's or root's; writable by others
 * only with the sticky bit, as /tmp, where nobody may move what is not theirs). A link on the way
 * is fine when the user or root made it; what it leads to is held to the same.
 */

/** Who may own the path itself: the user alone (a folder written into), or root too (a file only read). */
export type SelfOwner = 'user' | 'user-or-root';

/**
 * Why `p` is not safe from other users (`<path> is writable by others (mode 777)`, `… is another
 * user's folder`, `… is a link another user made`, `… is not a folder`), or undefined when it is,
 * or when it is not there (nothing to judge yet: the caller makes it, then asks again). `kind`:
 * what `p` must be. Undefined too where there are no users (no `process.getuid`).
 */
export function unsafePathReason(p: string, kind: 'file' | 'folder', selfOwner: SelfOwner = 'user'): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  return unsafeLink(path.resolve(p), uid) ?? unsafeTarget(path.resolve(p), kind, uid, selfOwner);
}

/** A link on the way to `p` (as named) that another user made; or a folder on the way that is none. */
function unsafeLink(p: string, uid: number): string | undefined {
  for (const at of selfAndAncestors(p)) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(at);
    } catch {
      continue; // not there (yet)
    }
    if (st.isSymbolicLink() && st.uid !== uid && st.uid !== 0) return `${at} is a link another user made`;
    if (at !== p && !st.isSymbolicLink() && !st.isDirectory()) return `${at} is not a folder`;
  }
  return undefined;
}

/** The first of `p` (as its links lead) and the folders above it that another user could change. */
function unsafeTarget(p: string, kind: 'file' | 'folder', uid: number, selfOwner: SelfOwner): string | undefined {
  let real: string;
  try {
    real = fs.realpathSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    // A link to nothing stands where the file or folder would be made.
    return fs.lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink() ? `${p} is not a ${kind} (a link to nothing)` : undefined;
  }
  for (const at of selfAndAncestors(real)) {
    const st = fs.statSync(at);
    const self = at === real;
    if (self && (kind === 'folder' ? !st.isDirectory() : !st.isFile())) return `${at} is not a ${kind}`;
    const ownerOk = st.uid === uid || (st.uid === 0 && (!self || selfOwner === 'user-or-root'));
    if (!ownerOk) return `${at} is another user's ${self && kind === 'file' ? 'file' : 'folder'}`;
    if ((st.mode & 0o022) !== 0 && (self || (st.mode & 0o1000) === 0)) return `${at} is writable by others (mode ${(st.mode & 0o7777).toString(8)})`;
  }
  return undefined;
}

/** `p` and each folder above it, up to the root, `p` first. */
function selfAndAncestors(p: string): string[] {
  const out = [p];
  for (let up = path.dirname(p); up !== out[out.length - 1]; up = path.dirname(up)) out.push(up);
  return out;
}
