// The file primitives every write of the host goes through (src/core/base/private-files.ts): new
// files only, mode 0600, under names nobody can guess, so a link planted by someone else is never
// written through (issue 21 item 2).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openNewFile, temporaryName, writeFileAtomically } from '../../../../src/core/base/private-files';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-private-files-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A file someone else could read, and a link to it at `at`. */
function plantLink(at: string): string {
  const target = path.join(dir, `target-of-${path.basename(at)}`);
  fs.writeFileSync(target, '');
  fs.symlinkSync(target, at);
  return target;
}

test('openNewFile refuses any existing path, a planted link (even a dangling one) included, and follows none', () => {
  const linked = path.join(dir, 'linked');
  const target = plantLink(linked);
  assert.throws(
    () => openNewFile(linked),
    (e: NodeJS.ErrnoException) => e.code === 'EEXIST' || e.code === 'ELOOP',
  );
  const dangling = path.join(dir, 'dangling');
  fs.symlinkSync(path.join(dir, 'would-be-made'), dangling);
  assert.throws(
    () => openNewFile(dangling),
    (e: NodeJS.ErrnoException) => e.code === 'EEXIST' || e.code === 'ELOOP',
  );
  assert.equal(fs.existsSync(path.join(dir, 'would-be-made')), false, 'nothing was made through the dangling link');
  assert.equal(fs.readFileSync(target, 'utf8'), '');
  const fd = openNewFile(path.join(dir, 'fresh'));
  fs.closeSync(fd);
  assert.equal(fs.statSync(path.join(dir, 'fresh')).mode & 0o777, 0o600);
});

test('writeFileAtomically replaces a link at the name (never writes through it) and leaves no temporary file', () => {
  const file = path.join(dir, 'record.json');
  const target = plantLink(file);
  writeFileAtomically(file, '{"token":"secret"}\n');
  assert.equal(fs.readFileSync(target, 'utf8'), '', 'the link target is untouched');
  assert.ok(fs.lstatSync(file).isFile());
  assert.equal(fs.lstatSync(file).mode & 0o777, 0o600);
  assert.equal(fs.readFileSync(file, 'utf8'), '{"token":"secret"}\n');
  assert.deepEqual(
    fs.readdirSync(dir).filter((n) => n.endsWith('.tmp')),
    [],
  );
});

test('temporary names are random: two for the same file differ and carry no pid', () => {
  const file = path.join(dir, 'h1.json');
  const a = temporaryName(file);
  const b = temporaryName(file);
  assert.notEqual(a, b);
  assert.match(path.basename(a), /^h1\.json\.[0-9a-f]{16}\.tmp$/);
  assert.ok(!a.includes(`.${process.pid}.`));
});
