/**
 * Does the session's foreground job wait for terminal input, and is that input a secret?
 * (docs/protocol.md#secret-input, docs/protocol.md#events-ptyevents-and-ptywaitevent: `input_wait` and `secret_input`.)
 */
import { foregroundStateOf } from './proc-state';

/**
 * `secret_input` — the job waits for a line the terminal does not echo (a password prompt);
 * `input_wait` — it waits for input otherwise; `busy` — it does not wait for input;
 * `unknown` — /proc cannot tell (not Linux, unreadable).
 */
export type InputWait = 'secret_input' | 'input_wait' | 'busy' | 'unknown';

/**
 * Probes the foreground job of the session led by `shellPid`. Whether it asks for a secret (the
 * terminal's mode, and for a prompt that reads keys the line at the cursor: SecretJudge) is asked
 * only when the job sleeps: for a job seen waiting on the terminal, and for one that sleeps behind
 * a hidden syscall file (sudo and passwd are setuid: /proc shows their state but not their system
 * call), where a secret mode is the only sign that it reads a password, and for one that relays the
 * terminal (ssh): whether what it relays to waits is unknown, but a password prompt shows (the
 * line at the cursor asks).
 */
export async function probeInputWait(shellPid: number, asksForSecret: () => Promise<boolean>): Promise<InputWait> {
  const state = foregroundStateOf(shellPid);
  if (state === 'busy' || state === 'unknown') return state;
  const secret = await asksForSecret();
  if (state === 'waiting_for_input') return secret ? 'secret_input' : 'input_wait';
  return secret ? 'secret_input' : 'unknown';
}
