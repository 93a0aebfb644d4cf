// What the editor remembers and says about recordings (docs/protocol.md#ptyrecord): the session list offers
// "Stop Recording" for what this window started, learns of a recording started elsewhere from the
// host's refusal to start a second one (a real host, real pty/record), and forgets recordings that
// ended with their session. (The clicks themselves: test/e2e/editor.test.ts.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RecordingMemory, recordingStoppedNotice, runningRecordingOf } from '../../../src/vscode/recording-notices';
import type { RpcClient } from '../../../src/transport/client/rpc-client';
import { connect, startHost } from '../../helpers/host';

let h: Awaited<ReturnType<typeof startHost>>;
let ctl: RpcClient;
let dir: string;

before(async () => {
  h = await startHost();
  ctl = await connect(h.host.controlAddress);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-rec-notice-'));
});

after(async () => {
  ctl?.close();
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("a refusal to record a session already being recorded names that recording's file; other refusals do not", async () => {
  const s = await ctl.request<{ id: string }>('session/create', { command: '/bin/sh', args: [], cwd: dir });
  const file = path.join(dir, 'first.cast');
  await ctl.request('pty/record', { session: s.id, path: file });
  const refusal = await ctl.request('pty/record', { session: s.id }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(refusal, 'a second recording is refused');
  assert.equal(runningRecordingOf(refusal), file);
  await ctl.request('pty/record', { session: s.id, stop: true });
  const exists = await ctl.request('pty/record', { session: s.id, path: file }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(exists, 'recording over an existing file is refused');
  assert.equal(runningRecordingOf(exists), undefined, 'that refusal is not about a running recording');
  assert.equal(runningRecordingOf(new Error('boom')), undefined);
  assert.equal(runningRecordingOf(undefined), undefined);
  await ctl.request('pty/kill', { session: s.id });
});

test('the memory keeps recordings per host and session, and drops those whose session no longer runs', () => {
  const m = new RecordingMemory();
  m.remember('h1', 's1', '/r/a.cast');
  m.remember('h2', 's1', '/r/b.cast');
  m.remember('h1', 's2', '/r/c.cast');
  assert.equal(m.fileOf('h1', 's1'), '/r/a.cast');
  assert.equal(m.fileOf('h2', 's1'), '/r/b.cast', 'the same session id on another host is another session');
  m.keepOnly([
    { hostId: 'h1', sessionId: 's1' },
    { hostId: 'h2', sessionId: 's1' },
  ]);
  assert.equal(m.fileOf('h1', 's2'), undefined, "an ended session's recording ended with it");
  m.forget('h1', 's1');
  assert.equal(m.fileOf('h1', 's1'), undefined);
  assert.equal(m.fileOf('h2', 's1'), '/r/b.cast');
});

test('the stop notice names the file', () => {
  assert.equal(
    recordingStoppedNotice('bash-1', '/home/ann/.local/share/shared-pty/recordings/bash-1-20261203T190000Z.cast'),
    'Stopped recording bash-1. The recording is /home/ann/.local/share/shared-pty/recordings/bash-1-20261203T190000Z.cast.',
  );
});
