// The tables of docs/protocol.md that the method table generates: methods (§3), REST routes
// (§5) and MCP tools (§6). `npm run docs` rewrites them; a test fails when the committed
// reference and the table disagree.
// Usage: node --import tsx scripts/protocol-tables.ts [--write]
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { z } from 'zod';
import type { MethodSpec } from '../src/core/methods/spec';
import { METHODS } from '../src/core/methods/table';
import { REST_ROUTES } from '../src/transport/http/rest-routes';
import { TOOLS } from '../src/transport/mcp/mcp-tools';

export const PROTOCOL_DOC = path.join(__dirname, '..', 'docs', 'protocol.md');
const TABLE = METHODS as readonly MethodSpec[];

/** A shape's field names, `?` after the optional ones. */
function fieldNames(shape: z.ZodRawShape): string[] {
  return Object.entries(shape).map(([k, f]) => ((f as z.ZodType).safeParse(undefined).success ? `${k}?` : k));
}

/** `{ a, b? }` for an object schema's fields; a titled schema by its title. */
function fields(schema: z.ZodType): string {
  const meta = (schema as { meta?: () => { title?: string } | undefined }).meta?.();
  if (meta?.title) return `\`${meta.title}\``;
  const shape = (schema as z.ZodObject).shape as z.ZodRawShape | undefined;
  if (!shape) return '—';
  const names = fieldNames(shape);
  return names.length ? `\`{ ${names.join(', ')} }\`` : '`{}`';
}

/** GitHub's anchor of the `###` heading that names `name` in backticks. */
function anchorOf(doc: string, name: string): string | undefined {
  const heading = doc.split('\n').find((l) => /^###\s/.test(l) && l.includes(`\`${name}\``));
  if (!heading) return undefined;
  return heading.replace(/^###\s+/, '').toLowerCase().replace(/[^a-z0-9 _-]/g, '').replace(/ /g, '-');
}

function methodsTable(doc: string): string {
  const rows = TABLE.map((m) => {
    const anchor = anchorOf(doc, m.name);
    const name = anchor ? `[\`${m.name}\`](#${anchor})` : `\`${m.name}\``;
    const where = m.target === 'host' ? ' (control only)' : m.target === 'session-or-host' ? ' (control: `session` optional)' : '';
    return `| ${name}${where} | ${fields(m.params)} | ${fields(m.result)} | ${m.scope} | ${m.summary} |`;
  });
  return ['| method | params | result | scope | what it does |', '|---|---|---|---|---|', ...rows].join('\n');
}

const VERB_ORDER = ['GET', 'POST', 'DELETE'];

function restTable(): string {
  const routes = [...REST_ROUTES].sort((a, b) => a.rest.path.localeCompare(b.rest.path) || VERB_ORDER.indexOf(a.rest.verb) - VERB_ORDER.indexOf(b.rest.verb));
  const rows = routes.map((r) => {
    const from = r.rest.from === 'query' ? 'query' : 'body';
    const defaults = Object.entries(r.rest.defaults ?? {}).map(([k, v]) => `\`${k}\` ${JSON.stringify(v)}`);
    const input = Object.keys(r.input.shape).length ? `${from} ${fields(r.input)}${defaults.length ? `; defaults: ${defaults.join(', ')}` : ''}` : '—';
    return `| \`${r.rest.verb} ${r.rest.path}\` | ${input} | \`${r.method.name}\` | ${r.method.scope} |`;
  });
  return ['| route | input | method | scope |', '|---|---|---|---|', ...rows].join('\n');
}

function toolsTable(): string {
  const rows = TOOLS.map((t) => {
    const input = Object.keys(t.input).length ? `\`${fieldNames(t.input).join(', ')}\`` : '—';
    const hints = [t.annotations.readOnlyHint ? 'read-only' : '', t.annotations.destructiveHint ? 'destructive' : ''].filter(Boolean).join(', ');
    const mcp = t.method.mcp!;
    const notes = [
      ...Object.entries(mcp.fixed ?? {}).map(([k, v]) => `\`${k}: ${JSON.stringify(v)}\``),
      ...Object.entries(mcp.defaults ?? {}).map(([k, v]) => `\`${k}\` defaults to ${JSON.stringify(v)}`),
      mcp.input ? `its params made from ${Object.keys(mcp.input.shape).map((k) => `\`${k}\``).join(', ')}` : '',
    ].filter(Boolean);
    const method = `\`${t.method.name}\`${notes.length ? ` (${notes.join('; ')})` : ''}`;
    // What the tool serves: a budgeted tool adds its counts (§9.5), one that shows the view its session (§9.7).
    const result = fields(t.output);
    const name = mcp.app === 'shows' ? `\`${t.name}\` (shows the terminal view)` : mcp.app === 'feeds' ? `\`${t.name}\` (the terminal view's own)` : `\`${t.name}\``;
    return `| ${name} | ${input} | ${method} | ${result} | ${t.method.scope}${hints ? ` (${hints})` : ''} |`;
  });
  return ['| tool | input | JSON-RPC method | structured result | scope |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** The reference with every generated region rewritten from the table. */
export function renderProtocolDoc(doc: string): string {
  const tables: Record<string, string> = { methods: methodsTable(doc), rest: restTable(), tools: toolsTable() };
  return doc.replace(/(<!-- generated: (\w+) -->\n)[\s\S]*?(\n<!-- end generated -->)/g, (all, open: string, name: string, close: string) =>
    name in tables ? `${open}${tables[name]}${close}` : all,
  );
}

if (require.main === module) {
  const doc = fs.readFileSync(PROTOCOL_DOC, 'utf8');
  const next = renderProtocolDoc(doc);
  if (process.argv.includes('--write')) fs.writeFileSync(PROTOCOL_DOC, next);
  else process.stdout.write(next === doc ? 'docs/protocol.md is current\n' : 'docs/protocol.md differs from the table: run npm run docs\n');
  process.exitCode = next === doc || process.argv.includes('--write') ? 0 : 1;
}
