import * as fs from 'node:fs';

/**
 * The processes `pid` started, and theirs, from /proc/<pid>/task/<tid>/children (Linux; an empty
 * list where that cannot be read). Read before any is signalled: once a parent ends, its children
 * belong to init and are no longer found from it.
 */
export function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const visit = (parent: number, depth: number) => {
    // A bound against a loop of pids reused while we read.
    if (depth > 32) return;
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const tid of tasks) {
      let children: string;
      try {
        children = fs.readFileSync(`/proc/${parent}/task/${tid}/children`, 'latin1');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        if (!Number.isInteger(child) || child <= 1 || found.includes(child)) continue;
        found.push(child);
        visit(child, depth + 1);
      }
    }
  };
  visit(pid, 0);
  return found;
}

/** `pid` and every process it started (descendantsOf), the youngest first: the order to signal them in. */
export function processTree(pid: number): number[] {
  return [...descendantsOf(pid).reverse(), pid];
}
