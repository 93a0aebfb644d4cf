// A host whose node-pty has no native module (an install whose scripts did not run) says so in one
// line with what to do, not node-pty's require stack (src/core/session/pty-loader.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noNativeModule } from '../../../../../src/core/session/pty-loader';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

test('node-pty without its native module: one line naming it and what to do, not the require stack', () => {
  const raw = new Error(
    "Failed to load native module: pty.node, checked: build/Release, build/Debug, prebuilds/linux-x64: Error: Cannot find module './prebuilds/linux-x64//pty.node'\nRequire stack:\n- /x/node_modules/node-pty/lib/utils.js\n- /x/node_modules/node-pty/lib/index.js",
  );
  const said = noNativeModule(raw).message;
  assert.ok(!said.includes('\n'), said);
  assert.match(said, /^node-pty has no native module for this machine \(Failed to load native module: pty\.node/);
  assert.match(said, /--allow-scripts=node-pty,koffi .*npm rebuild node-pty$/);
  // Any other failure is passed on as it was.
  const other = new Error('EACCES: permission denied');
  assert.equal(noNativeModule(other), other);
});
