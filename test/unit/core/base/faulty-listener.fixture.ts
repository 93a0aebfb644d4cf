// Run as a child process by faulty-listener.test.ts (with its TypeScript loader): a real Host whose session
// has a listener that throws on every chunk of output. Before the fix the error was rethrown in a
// microtask and ended this process; now it is logged and the host goes on. Prints one JSON line.
import { BASH, connect, startHost, TEST_WRITER, until } from '../../../helpers/host';

async function main(): Promise<void> {
  const { host, close } = await startHost();
  const session = await host.createSession({ ...BASH });
  let delivered = 0;
  session.onOutput(() => {
    throw new Error('faulty listener on purpose');
  });
  session.onOutput(() => delivered++);
  session.write('echo marker-$((6*7))\n', TEST_WRITER);
  await until(() => session.ring.read(0).text.includes('marker-42'), 10_000, 'the echo');
  // A rethrow in a microtask or a timer would have ended the process by now.
  await new Promise((r) => setTimeout(r, 300));
  const client = await connect(host.controlAddress);
  const info = await client.request<{ running: boolean }>('pty/info', { session: session.id });
  client.close();
  process.stdout.write(JSON.stringify({ delivered, running: info.running }) + '\n');
  await close();
  // The idle mirror thread would hold the process for its idle stop (10 s) under tsx: done is done.
  process.exit(0);
}

void main();
