import * as net from 'node:net';
import { ensureDaemon } from '../host/daemon';
import { parseAddress } from '../transport/base/address';
import { parseArgs } from './args';
import { COMMAND_FLAGS } from './command-flags';
import { CliError, whyHostClosed } from './find-session';
import { BRIDGE_HOST_GONE_STATUS } from '../host/remote-hosts';

/**
 * `bridge`: the control socket's JSON-RPC over stdin and stdout, to this machine's per-user host
 * (started when none runs), for the far end of `ssh` or `docker exec -i` (docs/hosts.md#remote-hosts).
 * Bytes pass both ways as they are, with back-pressure: calls and answers, subscriptions' output
 * and events. Its stdin closing is the end of input, as on a socket: what is still due (answers, live
 * subscriptions) comes, then it ends (0); when the host closes first, it says why on stderr and ends
 * with 1, or with BRIDGE_HOST_GONE_STATUS when the host is gone and its sessions with it.
 */
export async function bridgeCommand(argv: string[]): Promise<number> {
  parseArgs(argv, COMMAND_FLAGS.bridge);
  // The host to start is this very CLI (`daemon`), with the Node that runs us.
  const cliPath = require.main?.filename ?? process.argv[1];
  const host = await ensureDaemon({ cliPath, onOutdatedHost: (message) => process.stderr.write(`shared-pty bridge: ${message}\n`) });
  const ep = parseAddress(host.control);
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const s = ep.type === 'unix' ? net.connect(ep.path) : net.connect(ep.port, ep.host);
    s.once('connect', () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', (e) => reject(new CliError(`cannot reach host ${host.hostId}: ${e.message}`)));
  });
  const stdin = process.stdin;
  const stdout = process.stdout;
  let inputEnded = false;
  return new Promise<number>((resolve) => {
    stdin.once('end', () => (inputEnded = true));
    // The far side went away (ssh dropped): nothing more can be delivered, so we end too.
    stdout.on('error', () => socket.destroy());
    socket.on('error', () => undefined); // its close follows and says what happened
    socket.once('close', () => {
      stdin.unpipe(socket);
      stdin.destroy();
      void (async () => {
        let status = 0;
        if (!inputEnded) {
          // Killed or crashed (its sessions ended with it), or only this connection closed.
          const why = await whyHostClosed(host);
          status = why.gone ? BRIDGE_HOST_GONE_STATUS : 1;
          process.stderr.write(`shared-pty bridge: ${why.message}\n`);
        }
        // What the host sent last reaches the client before we go.
        stdout.write('', () => resolve(status));
      })();
    });
    stdin.pipe(socket); // stdin's end ends the socket's writing side; the host then closes it
    socket.pipe(stdout, { end: false });
  });
}
