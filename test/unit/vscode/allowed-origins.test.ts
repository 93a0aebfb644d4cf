// The editor's `sharedPty.allowedOrigins` as the daemon's `--allow-origin` (src/vscode/allowed-origins.ts):
// entries a browser would write otherwise are written as it writes them, entries that are no
// origin are left out with a warning, and what is passed on is always what the CLI's own check
// (src/cli/host-flags.ts, src/transport/base/origin.ts) takes, so one mistyped entry never stops the host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from '../../../src/cli/args';
import { COMMAND_FLAGS } from '../../../src/cli/command-flags';
import { httpFlags } from '../../../src/cli/host-flags';
import { isBrowserOrigin } from '../../../src/transport/base/origin';
import { droppedOriginsWarning, normalizeAllowedOrigins } from '../../../src/vscode/allowed-origins';

/** What `daemon --allow-origin LIST` makes of a list, as the CLI parses it (throws its usage error otherwise). */
function daemonTakes(list: string): string[] {
  return httpFlags(parseArgs(['--allow-origin', list], COMMAND_FLAGS.daemon)).allowedOrigins;
}

test('entries a browser writes otherwise are written as it writes them: lower case, no default port, no trailing /', () => {
  // [entry, the origin a browser sends]
  const cases: Array<[string, string]> = [
    ['https://App.Example', 'https://app.example'],
    ['HTTPS://APP.EXAMPLE:443', 'https://app.example'],
    ['https://x:443', 'https://x'],
    ['http://localhost:80/', 'http://localhost'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
    ['  http://localhost:3000/  ', 'http://localhost:3000'],
    ['https://app.example:8443', 'https://app.example:8443'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
  ];
  for (const [entry, origin] of cases) {
    assert.deepEqual(normalizeAllowedOrigins([entry]), { origins: [origin], dropped: [] }, entry);
    assert.ok(isBrowserOrigin(origin), origin);
    // The daemon (and `serve --allow-origin`) takes the entry as it is, and the origin, alike: such
    // an entry used to stop it (exit 2).
    assert.deepEqual(daemonTakes(origin), [origin], entry);
    assert.deepEqual(daemonTakes(entry), [origin], entry);
  }
});

test('entries that are still no origin are left out, named in the warning; the rest is what the daemon takes', () => {
  const bad = [
    'https://app.example/path',
    'https://app.example/?q=1',
    'https://app.example#top',
    'https://user:pw@app.example',
    'app.example',
    'localhost:3000',
    'file:///tmp/page.html',
    'not an origin',
    'https://',
  ];
  // An entry holding several, comma-separated, is read as the CLI reads its list.
  const entries = ['https://ok.example', ...bad, '', 'HTTPS://OK.EXAMPLE:443', 'http://localhost:3000', 'https://a.example, https://B.example/'];
  const r = normalizeAllowedOrigins(entries);
  assert.deepEqual(
    r.origins,
    ['https://ok.example', 'http://localhost:3000', 'https://a.example', 'https://b.example'],
    'duplicates once, empty entries skipped',
  );
  assert.deepEqual(r.dropped, bad);
  assert.deepEqual(daemonTakes(r.origins.join(',')), r.origins, 'the whole list passes the CLI check');
  for (const entry of bad) assert.throws(() => daemonTakes(entry), /--allow-origin needs origins/, `the CLI refuses ${entry} too`);
  const warning = droppedOriginsWarning(r.dropped);
  for (const entry of bad) assert.ok(warning.includes(`"${entry}"`), `${entry} is named`);
  assert.match(warning, /^sharedPty\.allowedOrigins: left out .*scheme:\/\/host\[:port\]/);
});
