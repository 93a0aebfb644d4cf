/** SIGKILL to the program's process group, else to the program alone; nothing when it is gone. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** SIGKILL to the program's process group if the program is still there (the host is going: it must not outlive us). */
export function killLeftover(pid: number): void {
  try {
    process.kill(pid, 0);
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone
  }
}
