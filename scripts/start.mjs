// `npm run serve`: runs a Shared PTY host in the foreground with one shared shell session and
// prints how to reach it (attach, list, the socket address). Ctrl+C stops it.
import { spawn } from 'node:child_process';

// Started exactly as a user starts it by hand: the host needs no tuning from its environment.
const child = spawn(process.execPath, ['bin/shared-pty.js', 'serve', ...process.argv.slice(2)], { stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
