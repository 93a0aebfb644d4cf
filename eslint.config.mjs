// The linter (npm run lint, part of npm test): TypeScript's recommended rules, no `any`, nothing
// unused, and the layering the layers test checks (test/unit/layers.test.ts), said again as import
// rules so an editor shows a wrong import where it is written.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The layers of src/ and what each may import of the others (as in the layers test). */
const LAYERS = {
  core: [],
  transport: ['core'],
  host: ['core', 'transport'],
  cli: ['core', 'transport', 'host'],
  vscode: ['core', 'transport', 'host'],
};
/** The engine's rooms, bottom first: each imports only the rooms before it. */
const ROOMS = ['base', 'process', 'mirror', 'commands', 'session', 'io', 'agent', 'methods'];
/** The transport's folders and which of the others each may import. */
const TRANSPORT = {
  base: [],
  rpc: ['base'],
  socket: ['base', 'rpc'],
  client: ['base', 'rpc'],
  ws: ['base', 'rpc'],
  pages: ['base'],
  mcp: ['base'],
  http: ['base', 'pages', 'ws', 'mcp'],
};

const VSCODE_ONLY = { name: 'vscode', message: 'Only src/vscode may import vscode: the engine runs headless too (docs/architecture.md).' };

/** A rule for imports of the folders in `names` reached by a relative path (`../name/…`, `../../name/…`). */
const folders = (names, message, anchored = false) => ({ regex: `${anchored ? '^' : '(^|/)'}\\.\\./(${names.join('|')})/`, message });

/** One config object per folder: a file gets the rules of its folder only (flat configs replace a rule, they do not add to it). */
function layering() {
  const configs = [];
  for (const [layer, allowed] of Object.entries(LAYERS)) {
    const banned = Object.keys(LAYERS).filter((l) => l !== layer && !allowed.includes(l));
    const layerRule = banned.length ? [folders(banned, `src/${layer} may import only ${allowed.join(', ') || 'itself'} (docs/architecture.md)`)] : [];
    const paths = layer === 'vscode' ? [] : [VSCODE_ONLY];
    const inner =
      layer === 'core'
        ? ROOMS.map((room, i) => [room, ROOMS.slice(i + 1)])
        : layer === 'transport'
          ? Object.entries(TRANSPORT).map(([f, ok]) => [f, Object.keys(TRANSPORT).filter((o) => o !== f && !ok.includes(o))])
          : [[undefined, []]];
    for (const [folder, above] of inner) {
      const patterns = [...layerRule];
      if (above.length && layer === 'core') patterns.push(folders(above, `src/core/${folder} may import only the rooms below it (${ROOMS.join(' ← ')})`));
      if (above.length && layer === 'transport')
        patterns.push(
          folders(
            above,
            `src/transport/${folder} may import only ${TRANSPORT[folder].join(', ') || 'the engine'}; shared pieces live in src/transport/base`,
            true,
          ),
        );
      configs.push({
        files: [folder ? `src/${layer}/${folder}/**/*.ts` : `src/${layer}/**/*.ts`],
        rules: { 'no-restricted-imports': ['error', { paths, patterns }] },
      });
    }
  }
  // The browser's pages: bundled for the browser, they take only the engine's types.
  configs.push({
    files: ['src/view/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [VSCODE_ONLY],
          patterns: [
            { regex: '^node:', message: 'src/view runs in the browser' },
            folders(['transport', 'host', 'cli', 'vscode'], "src/view may import only the engine's types"),
            { ...folders(['core'], "src/view may import only the engine's types (import type)"), allowTypeImports: true },
          ],
        },
      ],
    },
  });
  return configs;
}

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.vscode-test/**', '**/*.js', '**/*.mjs', '**/*.cjs', '**/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      // `const { session: _s, ...rest } = p`: a field left out on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // Terminal output is matched for what it is: escape sequences and control characters.
      'no-control-regex': 'off',
      // Constants named by what they are for may share a value (two waits of 15 s).
      '@typescript-eslint/no-duplicate-enum-values': 'off',
      // `/Usage:\n  shared-pty/` reads as the text it matches; `{2}` would not.
      'no-regex-spaces': 'off',
    },
  },
  {
    // The tests read the host's untyped answers (JSON) field by field; src/ has no `any` at all.
    files: ['test/**/*.ts', 'bench/**/*.mts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      'no-useless-assignment': 'off',
    },
  },
  ...layering(),
);
