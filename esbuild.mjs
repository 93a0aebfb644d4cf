// Bundles the CLI/host and the editor extension. node-pty and koffi (native) and vscode stay external.
import * as esbuild from 'esbuild';
import { readFileSync, writeFileSync, existsSync, mkdirSync, copyFileSync, cpSync, rmSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url)));
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: true,
  external: ['vscode', 'node-pty', 'koffi'],
  define: { __SHARED_PTY_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
};

// The mirror thread's entry sits next to the bundles that start it (src/core/mirror/mirror-thread.ts).
const entries = [
  { in: 'src/cli/main.ts', out: 'dist/cli.js' },
  // What bin/shared-pty.js runs: the client commands only (list, send, read…), a small file that
  // starts fast; for the others it runs dist/cli.js (docs/architecture.md#the-cli).
  { in: 'src/cli/main.ts', out: 'dist/cli-client.js', define: { __SHARED_PTY_CLIENT_BUNDLE__: 'true' } },
  { in: 'src/core/mirror/mirror-worker.ts', out: 'dist/mirror-worker.js' },
];
if (existsSync('src/vscode/extension.ts')) entries.push({ in: 'src/vscode/extension.ts', out: 'dist/extension.js' });
if (existsSync('src/view/main.ts')) entries.push({ in: 'src/view/main.ts', out: 'dist/view.js', browser: true });
// The replay page, with asciinema-player (and its WebAssembly terminal, inlined) bundled in.
if (existsSync('src/view/replay.ts')) entries.push({ in: 'src/view/replay.ts', out: 'dist/replay.js', browser: true, minify: true });

await Promise.all(
  entries.map((e) =>
    esbuild.build(
      e.browser
        ? { ...common, entryPoints: [e.in], outfile: e.out, platform: 'browser', format: 'iife', target: 'es2020', external: [], minify: e.minify ?? false }
        : { ...common, entryPoints: [e.in], outfile: e.out, define: { ...common.define, ...e.define } },
    ),
  ),
);

// The browser view's stylesheet ships next to the bundles (the VSIX has no node_modules/@xterm).
mkdirSync('dist', { recursive: true });
copyFileSync('node_modules/@xterm/xterm/css/xterm.css', 'dist/xterm.css');
copyFileSync('node_modules/asciinema-player/dist/bundle/asciinema-player.css', 'dist/asciinema-player.css');

/**
 * zod's messages in English only. zod re-exports every locale as `locales` (about 260 KB minified),
 * and since the MCP SDK uses `z` as a namespace the bundler keeps them all; zod itself only ever
 * installs English, and nothing in the page asks for another.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-locales', namespace: 'zod-english-only', pluginData: args.resolveDir } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: 'export { default as en } from "../locales/en.js";',
      resolveDir: args.pluginData,
      loader: 'js',
    }));
  },
};

/**
 * The MCP SDK's modules as free of side effects (they only define classes, schemas and functions;
 * their package.json does not say so). The page uses `Protocol` and a few schemas through
 * ext-apps; this lets the bundler leave out the client, its transports, OAuth and the
 * JSON Schema validator that nothing in the page calls.
 */
const mcpSdkPure = {
  name: 'mcp-sdk-pure',
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/(client|core)(\/|$)|^\.\.?\// }, async (args) => {
      if (args.pluginData === 'mcp-sdk-pure') return undefined;
      if (!args.path.startsWith('@modelcontextprotocol/') && !/[\\/]@modelcontextprotocol[\\/](client|core)[\\/]/.test(args.importer)) return undefined;
      const r = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'mcp-sdk-pure' });
      return r.errors.length ? undefined : { path: r.path, sideEffects: false };
    });
  },
};

/** What each package weighs in the page's script, minified (`SHOW_WEIGHTS=1 node esbuild.mjs`). */
function printWeights(metafile) {
  const out = Object.values(metafile.outputs)[0];
  const byPackage = new Map();
  for (const [file, { bytesInOutput }] of Object.entries(out.inputs)) {
    const name = file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? file.replace(/\/[^/]*$/, '');
    byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput);
  }
  console.log(`terminal-app.html script: ${out.bytes} bytes`);
  for (const [name, bytes] of [...byPackage].sort((a, b) => b[1] - a[1])) console.log(`${String(bytes).padStart(9)}  ${name}`);
}

// The terminal view of MCP Apps (src/transport/mcp/terminal-app.ts serves it): one HTML page with its
// script and styles inline, since a chat host renders it in a sandbox that may fetch nothing.
// What each part weighs, and what was left out, is measured in docs/architecture.md#the-mcp-app-page.
if (existsSync('src/view/terminal-app.ts')) {
  const app = await esbuild.build({
    entryPoints: ['src/view/terminal-app.ts'],
    plugins: [zodEnglishOnly, mcpSdkPure],
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
  });
  if (process.env.SHOW_WEIGHTS) printWeights(app.metafile);
  // A script element ends at the first `</script`, wherever it stands: the escaped form means the same in JS.
  const js = app.outputFiles[0].text.replace(/<\/(script)/gi, '<\\/$1');
  const css = (await esbuild.transform(readFileSync('node_modules/@xterm/xterm/css/xterm.css', 'utf8'), { loader: 'css', minify: true })).code.trim();
  const page = readFileSync('src/view/terminal-app.html', 'utf8');
  // Functions as replacements: a `$` in the bundle must stay a `$`.
  writeFileSync(
    'dist/terminal-app.html',
    page.replace('/*XTERM_CSS*/', () => css).replace('/*TERMINAL_APP_JS*/', () => js),
  );
}

// The shell integration scripts ship next to the bundles that start shells, where
// src/core/commands/shell-integration.ts looks for them (zsh's are dot files: ZDOTDIR points there).
rmSync('dist/shell-integration', { recursive: true, force: true });
cpSync('src/core/commands/shell-integration', 'dist/shell-integration', { recursive: true });
