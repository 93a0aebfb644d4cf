// The command line's parsing, shared by every command; the flags only a host takes are in
// host-flags.ts, so a client command loads nothing of the engine (docs/architecture.md#the-cli).

import { cutAt } from './one-line';
import { MAX_SESSION_NAME_CHARS, SESSION_NAME_CONTROL, SESSION_NAME_RULE } from '../core/base/limits';

/** A bad command line: printed as one line, exit status 2. */
export class UsageError extends Error {}

export interface FlagSpec {
  /** Flags that take a value (`--timeout 500` or `--timeout=500`). */
  values?: string[];
  /** Flags that take none. */
  booleans?: string[];
  /**
   * Flags of `values` that may be given more than once, each value kept (`listFlag`), as a rule
   * per `--agent-deny`; any other flag given twice is a UsageError, never a value silently lost.
   */
  repeatable?: string[];
  /**
   * The most positional arguments the command takes (none checked when absent): one more is a
   * UsageError, so a typo or a misplaced word is never silently ignored.
   */
  maxPositional?: number;
  /**
   * The words after a lone `--` are a command line of their own (`serve --cmd … -- ARGS`, `open --
   * COMMAND ARGS`), kept in `rest`. Without it they are positional arguments, as POSIX's `--` makes
   * them: `send s -- -n` types `-n`, and `list -- x` is a surplus argument, never silently dropped.
   */
  rest?: boolean;
}

export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string | true>;
  /** Every value of each repeatable flag, in order (see FlagSpec.repeatable). */
  lists: Map<string, string[]>;
  /** Everything after a lone `--`, for a command whose spec has `rest` (else they are positional). */
  rest: string[];
}

/** Parses argv against a flag spec; an unknown flag is a UsageError. */
export function parseArgs(argv: string[], spec: FlagSpec): ParsedArgs {
  const values = new Set(spec.values ?? []);
  const booleans = new Set(spec.booleans ?? []);
  const repeatable = new Set(spec.repeatable ?? []);
  const out: ParsedArgs = { positional: [], flags: new Map(), lists: new Map(), rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      if (spec.rest) out.rest = argv.slice(i + 1);
      else out.positional.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--') || (a.startsWith('-') && a.length === 2 && !/^-\d$/.test(a))) {
      const eq = a.indexOf('=');
      const name = eq === -1 ? a : a.slice(0, eq);
      if (booleans.has(name)) {
        if (eq !== -1) throw new UsageError(`${name} takes no value`);
        out.flags.set(name, true);
      } else if (values.has(name)) {
        const v = eq !== -1 ? a.slice(eq + 1) : argv[++i];
        if (v === undefined) throw new UsageError(`${name} needs a value`);
        // `--socket --no-http` lost its value, not named a socket "--no-http" (and dropped the flag).
        if (eq === -1 && isFlagOf(v, values, booleans)) throw new UsageError(`${name} needs a value before ${v}`);
        if (repeatable.has(name)) out.lists.set(name, [...(out.lists.get(name) ?? []), v]);
        // Only one value is kept: a second one would silently replace the first.
        else if (out.flags.has(name)) throw new UsageError(`${name} is given twice; give it once`);
        out.flags.set(name, v);
      } else throw new UsageError(`unknown flag ${name}`);
    } else out.positional.push(a);
  }
  if (spec.maxPositional !== undefined && out.positional.length > spec.maxPositional) {
    throw new UsageError(`unexpected argument "${quotedWord(out.positional[spec.maxPositional])}"`);
  }
  return out;
}

/** Whether `word` is one of the command's own flags (`--flag` or `--flag=value`), or the `--` that ends them. */
export function isFlagOf(word: string, values: ReadonlySet<string>, booleans: ReadonlySet<string>): boolean {
  if (word === '--') return true;
  const name = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
  return word.startsWith('-') && (values.has(name) || booleans.has(name));
}

/** A flag's value as a non-negative integer (or undefined when absent). */
export function intFlag(args: ParsedArgs, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${name} needs a whole number from ${min} to ${max}, got "${v}"`);
  return n;
}

/** Every value a repeatable flag was given, in order (none: an empty list). */
export function listFlag(args: ParsedArgs, name: string): string[] {
  return args.lists.get(name) ?? [];
}

/** `--name`'s value, checked as the host will check it (1 to MAX_SESSION_NAME_CHARS characters, no control character), or undefined when absent. */
export function nameFlag(args: ParsedArgs): string | undefined {
  const v = strFlag(args, '--name');
  if (v !== undefined && (v.length === 0 || v.length > MAX_SESSION_NAME_CHARS)) {
    throw new UsageError(`--name needs a name of 1 to ${MAX_SESSION_NAME_CHARS} characters, got ${v.length === 0 ? 'an empty one' : `${v.length}`}`);
  }
  if (v !== undefined && SESSION_NAME_CONTROL.test(v)) throw new UsageError(`--name: ${SESSION_NAME_RULE}`);
  return v;
}

export function strFlag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

/** A word of the command line as a message shows it: a long one (a text of 100 KB) cut to its start. */
export function quotedWord(word: string): string {
  return word.length > 60 ? `${cutAt(word, 60)}…` : word;
}
