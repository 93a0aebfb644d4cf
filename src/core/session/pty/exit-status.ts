import * as os from 'node:os';
import type { ExitInfo } from '../session-types';

const signalNames = new Map<number, string>(Object.entries(os.constants.signals).map(([name, num]) => [num, name]));

/** How the program ended as node-pty reports it, the way a shell says it: a signal is 128 + its number, and named. */
export function exitInfoOf(exitCode: number, signal?: number): ExitInfo {
  const signalName = signal ? (signalNames.get(signal) ?? String(signal)) : null;
  return { exitCode: signal ? 128 + signal : exitCode, signal: signalName };
}
