import * as fs from 'node:fs';
import { until } from './host';

/**
 * What a `sleep` program holds once it sleeps, as "fd target" lines. Between node-pty's fork and
 * its exec the child is still a copy of the host, with all of the host's descriptors (close-on-exec
 * ones included), and just after the exec the loader still has the C library open: read earlier,
 * the list shows descriptors the program never keeps.
 */
export async function descriptorsOfSleeping(pid: number): Promise<string[]> {
  await until(() => fs.readFileSync(`/proc/${pid}/wchan`, 'utf8').includes('nanosleep'), 10_000, `program ${pid} to sleep`);
  return fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
    try {
      return `${fd} ${fs.readlinkSync(`/proc/${pid}/fd/${fd}`)}`;
    } catch {
      return `${fd} (closed)`;
    }
  });
}
