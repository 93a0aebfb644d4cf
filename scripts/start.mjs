// `npm run serve`: runs a Shared PTY host in the foreground with one shared shell session and
// prints how to reach it (attach, list, the socket address). Ctrl+C stops it.
import { spawn } from 'node:child_process';
import { tsImport } from 'tsx/esm/api';

// The environment the editor starts its per-user host with (huge-page malloc on Linux).
const { withHugePageMalloc } = await tsImport('../src/core/session/malloc-env.ts', import.meta.url);
const child = spawn(process.execPath, ['bin/shared-pty.js', 'serve', ...process.argv.slice(2)], { stdio: 'inherit', env: withHugePageMalloc(process.env) });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
