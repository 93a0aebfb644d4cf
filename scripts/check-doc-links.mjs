// Checks that every pointer into the handbook resolves, and that nothing points outside the
// repository (docs/README.md, "Pointing at the handbook from code"):
//
// - a file in src/, test/, scripts/ or bench/ (or a page of docs/, or the README) that cites the
//   design notes the project grew from (the interface contract or its seed documents) fails: they
//   are not in the repository, so a maintainer cannot follow the citation (scripts/rewrite-doc-refs.mjs
//   turns such citations into links);
// - every `docs/<page>.md` or `docs/<page>.md#<anchor>` they mention must name a page that exists
//   and, with an anchor, one of its headings (GitHub's anchors) or an explicit `<a id>`;
// - every relative Markdown link in docs/ and the README must resolve the same way.
//
// Usage: node scripts/check-doc-links.mjs   (exit 1 with one line per problem; run by npm test)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const CODE_DIRS = ['src', 'test', 'scripts', 'bench'];
const TEXT = /\.(ts|tsx|js|mjs|cjs|json|html|css|sh|md|yaml|yml)$/;
/** The rewrite script names what it rewrites, so it alone may spell the citations out. */
const EXEMPT = new Set(['scripts/rewrite-doc-refs.mjs']);
/** Citations of documents outside the repository (spelled in two pieces so this file passes itself). */
const OUTSIDE = [new RegExp('CONT' + 'RACT'), new RegExp('seed' + 's/[\\w.-]+')];
const DOC_REF = /docs\/([\w.-]+\.md)(?:#([\w-]+))?/g;
const MD_LINK = /\]\(([^)\s]+)\)/g;

/** GitHub's anchor for a heading: lower case, punctuation gone, spaces to hyphens. */
export function slug(heading) {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map();
/** Every anchor of a Markdown file: its headings (outside code fences, numbered when repeated) and `<a id|name>`. */
function anchorsOf(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const anchors = new Set();
  const seen = new Map();
  let fence = null;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const f = /^\s*(```|~~~)/.exec(line);
    if (f) {
      if (fence === null) fence = f[1];
      else if (f[1] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(a[1]);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

function* filesUnder(dir) {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* filesUnder(p);
    else if (TEXT.test(name)) yield p;
  }
}

const problems = [];
const lineOf = (text, index) => text.slice(0, index).split('\n').length;

/** A target (a path relative to `from`'s folder, maybe with #anchor) that must exist. */
function checkTarget(where, fromDir, target, shown = target) {
  const [path, anchor] = target.split('#');
  const file = path ? normalize(join(fromDir, decodeURI(path))) : null;
  if (file && !existsSync(file)) return problems.push(`${where}: ${shown}: no such file`);
  if (anchor === undefined || anchor === '') return;
  if (file === null || !file.endsWith('.md')) return;
  if (!anchorsOf(file).has(anchor)) problems.push(`${where}: ${shown}: no heading with the anchor #${anchor} in ${relative(ROOT, file)}`);
}

const files = [...CODE_DIRS.flatMap((d) => [...filesUnder(join(ROOT, d))]), ...filesUnder(join(ROOT, 'docs')), join(ROOT, 'README.md')];
for (const path of files) {
  const file = relative(ROOT, path);
  if (EXEMPT.has(file)) continue;
  const text = readFileSync(path, 'utf8');
  for (const pattern of OUTSIDE) {
    for (const m of text.matchAll(new RegExp(pattern.source, 'g'))) {
      problems.push(
        `${file}:${lineOf(text, m.index)}: cites "${m[0]}", which is not in the repository; point at docs/ instead (node scripts/rewrite-doc-refs.mjs)`,
      );
    }
  }
  for (const m of text.matchAll(DOC_REF)) {
    // A path that is part of a longer one (`bench/docs/x.md`) or a placeholder is not a pointer.
    if (m.index > 0 && /[\w/.-]/.test(text[m.index - 1])) continue;
    checkTarget(`${file}:${lineOf(text, m.index)}`, join(ROOT, 'docs'), m[1] + (m[2] ? `#${m[2]}` : ''), m[0]);
  }
  if (file.endsWith('.md') && (file.startsWith('docs/') || file === 'README.md')) {
    for (const m of text.matchAll(MD_LINK)) {
      const target = m[1].replace(/^<|>$/g, '');
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:, ui:
      checkTarget(`${file}:${lineOf(text, m.index)}`, dirname(path), target.startsWith('#') ? relative(dirname(path), path) + target : target, target);
    }
  }
}

if (problems.length) {
  for (const p of problems) console.error(p);
  console.error(`check-doc-links: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log(`check-doc-links: ${files.length} files, every docs/ pointer resolves, no citation outside the repository`);
