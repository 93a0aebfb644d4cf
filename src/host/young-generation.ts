import { setV8FlagFromNowOn } from './v8-flags';

/**
 * Keeps the main thread's young generation (V8's new space) at the size it has when the host
 * starts. Called once, before the host starts, by the commands that run a host in their process
 * (`serve`, `daemon`): the editor and the MCP server start the same `daemon`, so every host a user
 * runs gets it, and no user has to start node with a flag.
 *
 * V8 doubles a new space (up to 2 x 16 MiB) when many objects survive its collections, as they
 * do while sessions are being opened (each session's objects live on), and gives it back only in
 * a collection run while the process allocates little, which an idle host never runs: after 255
 * sessions were opened the host kept ~24 MiB more for good, ~95 KiB of each idle session's ~124
 * (bench/README.md, issue 25: memory). What the main thread makes and drops is short-lived (a
 * read's buffer, a request and its answer), which the starting size collects as well.
 * `--max-semi-space-size` can only be given when node starts; the growth factor is read at each
 * growth, so setting it here holds for the heap already made (and again after each worker's
 * start: v8-flags.ts). The mirror thread's own young generation is bounded where it is started
 * (mirror-thread.ts).
 */
export function keepYoungGenerationSmall(): void {
  setV8FlagFromNowOn(`--semi-space-growth-factor=${NO_GROWTH}`);
}

/** A new space grows to this many times its size when it grows: 1 keeps it as it is. */
const NO_GROWTH = 1;
