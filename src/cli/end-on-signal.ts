import * as os from 'node:os';
import { endEveryBridge } from '../host/remote-hosts';

/** The signals that end a CLI command: Ctrl+C, `kill`, the terminal hanging up. */
const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

type EndingSignal = (typeof ENDING_SIGNALS)[number];

/** One listener per signal, so that installing twice adds none. */
const listeners: Record<EndingSignal, () => void> = {
  SIGINT: () => onSignal('SIGINT'),
  SIGTERM: () => onSignal('SIGTERM'),
  SIGHUP: () => onSignal('SIGHUP'),
};

/**
 * Makes SIGINT, SIGTERM and SIGHUP end a CLI command as they do without a listener, by the signal
 * (a shell reports 128 + its number), once the remote hosts' bridge commands it started have ended
 * with what they started (docs/hosts.md#remote-hosts): a signal must not leave an `ssh` running on
 * its own. A command that listens for the signal itself (`events`, `record`, `serve`, `daemon`)
 * decides alone what it does; one that then exits at once still kills its bridges as it goes.
 */
export function endBridgesOnSignal(): void {
  for (const signal of ENDING_SIGNALS) if (!process.listeners(signal).includes(listeners[signal])) process.on(signal, listeners[signal]);
}

function onSignal(signal: EndingSignal): void {
  // The command's own listener is there too: it decides.
  if (process.listenerCount(signal) > 1) return;
  void endBySignal(signal);
}

/**
 * Ends the command by `signal`, as it ends without a listener (a shell reports 128 + its number),
 * once the bridges it started have ended. Also for a command whose terminal hung up before the
 * signal came (`attach`): ended by the signal, the process skips Node's exit-time restore of the
 * terminal's mode, which aborts when the terminal is gone.
 */
export function endBySignal(signal: EndingSignal): Promise<never> {
  return endEveryBridge().then(() => {
    // Ended by the signal itself, as without a listener; the status stands should it not come.
    process.exitCode = 128 + os.constants.signals[signal];
    for (const s of ENDING_SIGNALS) process.removeListener(s, listeners[s]);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return new Promise<never>(() => {});
  });
}
