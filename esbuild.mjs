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
        : { ...common, entryPoints: [e.in], outfile: e.out },
    ),
  ),
);

// The browser view's stylesheet ships next to the bundles (the VSIX has no node_modules/@xterm).
mkdirSync('dist', { recursive: true });
copyFileSync('node_modules/@xterm/xterm/css/xterm.css', 'dist/xterm.css');
copyFileSync('node_modules/asciinema-player/dist/bundle/asciinema-player.css', 'dist/asciinema-player.css');

// The terminal view of MCP Apps (src/transport/mcp/terminal-app.ts serves it): one HTML page with its
// script and styles inline, since a chat host renders it in a sandbox that may fetch nothing.
if (existsSync('src/view/terminal-app.ts')) {
  const app = await esbuild.build({
    entryPoints: ['src/view/terminal-app.ts'],
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  // A script element ends at the first `</script`, wherever it stands: the escaped form means the same in JS.
  const js = app.outputFiles[0].text.replace(/<\/(script)/gi, '<\\/$1');
  const css = readFileSync('node_modules/@xterm/xterm/css/xterm.css', 'utf8');
  const page = readFileSync('src/view/terminal-app.html', 'utf8');
  // Functions as replacements: a `$` in the bundle must stay a `$`.
  writeFileSync('dist/terminal-app.html', page.replace('/*XTERM_CSS*/', () => css).replace('/*TERMINAL_APP_JS*/', () => js));
}

// The shell integration scripts ship next to the bundles that start shells, where
// src/core/commands/shell-integration.ts looks for them (zsh's are dot files: ZDOTDIR points there).
rmSync('dist/shell-integration', { recursive: true, force: true });
cpSync('src/core/commands/shell-integration', 'dist/shell-integration', { recursive: true });
