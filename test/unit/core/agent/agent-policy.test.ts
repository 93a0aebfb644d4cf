// docs/protocol.md#agent-write-approval, agent write approval as a headless host applies it: with `deny`, an agent's
// (MCP) writes into a session the user opened are refused with nothing written, while sessions
// an agent opened are its own; a deny rule refuses the lines it matches whatever the policy.
// Scripts and the user are never held. A real host and bash; the agent calls as `shared-pty mcp`
// relays them (`client: { origin: "agent", transport: "mcp-stdio" }`).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, rejectsWith, startHost, until, clientsClosed } from '../../../helpers/host';
import { agentCalls } from '../../../helpers/agent-calls';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** The user declined an agent's write: socket-pty's server error, `data.reason: "declined"` (docs/protocol.md#4-error-codes). */
const DECLINED = -32000;

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('agent write approval (headless)', () => {
  let h: Awaited<ReturnType<typeof startHost>>;
  let ctl: RpcClient;
  /** The agent's own connection: saying who it is names the connection's caller. */
  let agentCtl: RpcClient;
  before(async () => {
    h = await startHost({ agentApproval: 'deny', agentDenyCommands: ['^rm -rf'] });
    ctl = await connect(h.host.controlAddress);
    agentCtl = await connect(h.host.controlAddress);
  });
  after(async () => {
    agentCtl?.close();
    ctl?.close();
    await h?.close();
  });

  const rpc = (method: string, params: Record<string, unknown>) => calls().rpc(method, params);
  const agentRpc = (method: string, params: Record<string, unknown>) => calls().agentRpc(method, params);
  const open = (origin: 'user' | 'agent') => calls().open(origin);
  const calls = () => agentCalls(ctl, agentCtl);

  test("deny: an agent may not type into the user's session; the user and scripts may", { timeout: 30_000 }, async () => {
    const id = await open('user');
    const err = await rejectsWith(agentRpc('pty/send', { session: id, text: 'echo agent-ran' }), DECLINED);
    assert.equal((err.data as { reason: string }).reason, 'declined');
    assert.match(err.message, /user declined/);
    await rejectsWith(agentRpc('pty/write', { session: id, action: { text: 'x' } }), DECLINED);
    const script = await rpc('pty/send', { session: id, text: 'echo script-ran' });
    assert.match(script.output, /script-ran/);
    assert.doesNotMatch((await rpc('pty/read', { session: id })).screen, /agent-ran|\$ x/);
    await rpc('pty/kill', { session: id });
  });

  test("an agent's own session is its own; a deny rule still refuses its lines", { timeout: 30_000 }, async () => {
    const id = await open('agent');
    const ok = await agentRpc('pty/send', { session: id, text: 'echo agent-ran' });
    assert.match(ok.output, /agent-ran/);
    const err = await rejectsWith(agentRpc('pty/send', { session: id, text: 'rm -rf /tmp/spt-never-there' }), DECLINED);
    assert.match(err.message, /deny rule/);
    await rpc('pty/kill', { session: id });
  });

  test('host/agentPolicy reads and sets the policy at once; a bad rule changes nothing; an agent may not set it', { timeout: 30_000 }, async () => {
    assert.deepEqual(await rpc('host/agentPolicy', {}), { approval: 'deny', denyCommands: ['^rm -rf'], canAsk: false });
    const window = await connect(h.host.controlAddress);
    await window.request('host/watchAgents', {});
    assert.equal((await rpc('host/agentPolicy', {})).canAsk, true, 'a watching window can be asked');
    window.close();
    await until(async () => !(await rpc('host/agentPolicy', {})).canAsk, 5000, 'canAsk false once the window is gone');
    const id = await open('user');
    await rpc('host/agentPolicy', { approval: 'allow' });
    assert.match((await agentRpc('pty/send', { session: id, text: 'echo now-allowed' })).output, /now-allowed/);
    await rejectsWith(rpc('host/agentPolicy', { denyCommands: ['(unclosed'] }), -32602);
    assert.deepEqual(
      await rpc('host/agentPolicy', {}),
      { approval: 'allow', denyCommands: ['^rm -rf'], canAsk: false },
      'a bad rule leaves the policy as it was',
    );
    await rejectsWith(agentRpc('host/agentPolicy', { approval: 'allow' }), -32004);
    await rpc('host/agentPolicy', { approval: 'deny' });
    await rejectsWith(agentRpc('pty/send', { session: id, text: 'echo denied-again' }), DECLINED);
    await rpc('pty/kill', { session: id });
  });
});
