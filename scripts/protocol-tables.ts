// The reference parts of docs/protocol.md, generated from the method table: the methods (§3),
// each method's params (types, bounds, defaults) and result, the notifications and the events,
// the error codes (§4), the REST routes and statuses, the stream's messages and close codes (§5) and the MCP tools (§6). The prose around them is
// written by hand. `npm run docs` rewrites them; `npm test` fails when the committed reference and
// the table disagree.
// Usage: node --import tsx scripts/protocol-tables.ts [--write]
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import * as errors from '../src/core/base/errors';
import { ERROR_CODES } from '../src/core/base/errors';
import type { MethodSpec } from '../src/core/methods/spec';
import { METHODS } from '../src/core/methods/table';
import { EVENT_MEANINGS, NOTIFICATIONS, type NotificationSpec } from '../src/core/methods/notifications';
import { STREAM_CLOSE, STREAM_FRAMES, type StreamCloseSpec, type StreamFrameSpec } from '../src/core/methods/stream-frames';
import { agentApprovalNow, commandRecord, lastInput, paramDefaults, sessionInfo, tokenInfo } from '../src/core/methods/schemas';
import { approvalQuestion, approvalRequest } from '../src/core/agent/approval-request';
import { hostEvent } from '../src/core/session/events/session-events';
import { REST_ROUTES } from '../src/transport/http/rest-routes';
import { TOOLS } from '../src/transport/mcp/mcp-tools';

export const PROTOCOL_DOC = path.join(__dirname, '..', 'docs', 'protocol.md');
/** The command that rewrites the generated parts (package.json's `docs`). */
export const REGENERATE = 'npm run docs (node --import tsx scripts/protocol-tables.ts --write)';
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

// ---- Types, as a reader of the reference wants them: from the JSON Schema zod makes of each field.

/** A JSON Schema as zod writes it (the parts the reference shows). */
interface Json {
  title?: string;
  description?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: Json[];
  oneOf?: Json[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  items?: Json;
  properties?: Record<string, Json>;
  required?: string[];
  additionalProperties?: Json | boolean;
}

function jsonOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  return z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
}

/** A bound worth printing: zod writes ±2^53-1 for "any safe integer". */
const bound = (n: number | undefined) => (n === undefined || Math.abs(n) >= Number.MAX_SAFE_INTEGER ? undefined : n);

function range(min: number | undefined, max: number | undefined, unit = ''): string {
  if (min !== undefined && max !== undefined) return ` ${min}…${max}${unit}`;
  if (min !== undefined) return ` ≥ ${min}${unit}`;
  if (max !== undefined) return ` ≤ ${max}${unit}`;
  return '';
}

/** A type in words and code: `integer 1…86400000`, `"a"` \| `"b"`, `string[]`, `CommandRecord` \| null. */
function typeText(js: Json, top = true): string {
  if (js.title && !top) return `\`${js.title}\``;
  if ('const' in js) return `\`${JSON.stringify(js.const)}\``;
  if (js.enum) return js.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  const options = js.anyOf ?? js.oneOf;
  if (options) return options.map((o) => typeText(o, false)).join(' \\| ');
  // zod writes a nullable scalar as a list of types: `number \| null`.
  if (Array.isArray(js.type)) return js.type.map((t) => typeText({ ...js, type: t }, false)).join(' \\| ');
  switch (js.type) {
    case 'integer':
    case 'number': {
      const min = bound(js.minimum) ?? (bound(js.exclusiveMinimum) === undefined ? undefined : `>${js.exclusiveMinimum}`);
      return `${js.type}${range(typeof min === 'number' ? min : undefined, bound(js.maximum))}`;
    }
    case 'string': {
      if (js.minLength === 1 && js.maxLength === undefined) return 'string, not empty';
      const len = range(js.minLength, js.maxLength, ' chars');
      return `string${len ? `,${len}` : ''}`;
    }
    case 'array': {
      const item = js.items ? typeText(js.items, false) : 'any';
      const list =
        item.includes(' ') && !item.startsWith('`{')
          ? `(${item})[]`
          : item.startsWith('`') && item.endsWith('`') && !item.includes('\\|')
            ? `\`${item.slice(1, -1)}[]\``
            : `${item}[]`;
      return `${list}${js.minItems ? ', at least ' + js.minItems : ''}`;
    }
    case 'object': {
      if (js.title) return `\`${js.title}\``;
      const props = Object.keys(js.properties ?? {});
      if (!props.length && typeof js.additionalProperties === 'object') return `object of ${typeText(js.additionalProperties, false)}s`;
      const required = new Set(js.required ?? []);
      // A field of one value says it (`{ kind: "running" }`): that is what tells the cases of a union apart.
      const named = (p: string) => {
        const f = js.properties![p];
        return 'const' in f ? `${p}: ${JSON.stringify(f.const)}` : required.has(p) ? p : `${p}?`;
      };
      return `\`{ ${props.map(named).join(', ')} }\``;
    }
    case undefined:
      return 'any';
    default:
      return js.type;
  }
}

/** Text for a table cell: one line, pipes escaped. */
const cell = (s: string) =>
  s
    .replace(/\n/g, ' ')
    .replace(/\|/g, '\\|')
    .replace(/\\\\\|/g, '\\|');

/** What a param is when left out: its registered default, "required", or "—". */
function defaultText(field: z.ZodType): string {
  if (!field.safeParse(undefined).success) return 'required';
  const d = paramDefaults.get(field);
  if (!d) return '—';
  return 'value' in d ? `\`${JSON.stringify(d.value)}\`` : cell(d.says);
}

/**
 * A description that names its own default (`(default 30000)`) must name the registered one: the
 * two were written apart once, and this is where they disagreed.
 */
function checkDescribedDefault(where: string, field: z.ZodType, description: string | undefined): void {
  const said = description?.match(/\(default (-?[\d.]+|true|false)\b/);
  const d = paramDefaults.get(field);
  if (!said) return;
  if (!d || !('value' in d)) throw new Error(`${where}: the description says "default ${said[1]}" but no default is registered (byDefault)`);
  if (String(d.value) !== said[1]) throw new Error(`${where}: the description says "default ${said[1]}", the registered default is ${JSON.stringify(d.value)}`);
}

function paramsTable(m: MethodSpec): string {
  const shape = m.params.shape as z.ZodRawShape;
  const names = Object.keys(shape);
  if (!names.length) return 'No params.';
  const rows = names.map((name) => {
    const field = shape[name] as z.ZodType;
    const js = jsonOf(field, 'input');
    checkDescribedDefault(`${m.name} ${name}`, field, js.description);
    return `| \`${name}\` | ${typeText(js)} | ${defaultText(field)} | ${cell(js.description ?? '')} |`;
  });
  return ['| param | type | default | |', '|---|---|---|---|', ...rows].join('\n');
}

/** The fields of an object schema, one row each: name, type, what it says. */
function fieldsTable(schema: z.ZodType, io: 'input' | 'output'): string {
  const js = jsonOf(schema, io);
  const required = new Set(js.required ?? []);
  const rows = Object.entries(js.properties ?? {}).map(([name, f]) => {
    const optional = required.has(name) ? '' : ' (optional)';
    return `| \`${name}\` | ${typeText(f, false)}${optional} | ${cell(f.description ?? '')} |`;
  });
  return ['| field | type | |', '|---|---|---|', ...rows].join('\n');
}

function resultText(m: MethodSpec): string {
  const title = (m.result as { meta?: () => { title?: string } | undefined }).meta?.()?.title;
  if (title) return `Result: \`${title}\`.`;
  const shape = (m.result as z.ZodObject).shape as z.ZodRawShape | undefined;
  if (!shape || !Object.keys(shape).length) return 'Result: `{}`.';
  return `Result: ${fields(m.result)}\n\n${fieldsTable(m.result, 'output')}`;
}

/** One method's reference: who may call it, its params with bounds and defaults, its result. */
function methodBlock(name: string): string {
  const m = TABLE.find((x) => x.name === name);
  if (!m) throw new Error(`docs/protocol.md has a generated block for ${name}, which the method table does not have`);
  const where =
    m.target === 'host'
      ? 'Control socket and `/rpc` only'
      : m.target === 'session-or-host'
        ? 'Any socket; on a control endpoint `session` is optional'
        : 'Any socket (on a control endpoint, with `session`)';
  return [`*${where}; scope \`${m.scope}\`${exitedNote(m.needsRunning)}.*`, '', paramsTable(m), '', resultText(m)].join('\n');
}

// ---- The tables of the whole protocol.

/** GitHub's anchor of the `###` heading that names `name` in backticks. */
function anchorOf(doc: string, name: string): string | undefined {
  const heading = doc.split('\n').find((l) => /^###\s/.test(l) && l.includes(`\`${name}\``));
  if (!heading) return undefined;
  return heading
    .replace(/^###\s+/, '')
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
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

function notificationsTable(): string {
  const specs = NOTIFICATIONS as readonly NotificationSpec[];
  const rows = specs.map(
    (n) => `| \`${n.name}\` | ${n.after.map((a) => (a.includes('/') ? `\`${a}\`` : a)).join(', ')} | ${notificationParams(n)} | ${cell(n.summary)} |`,
  );
  const table = ['| notification | after | params | what it says |', '|---|---|---|---|', ...rows].join('\n');
  const details = specs
    .filter((n) => n.params instanceof z.ZodObject)
    .map((n) => `\`${n.name}\`:\n\n${fieldsTable(n.params, 'output')}`)
    .join('\n\n');
  return `${table}\n\n${details}`;
}

function notificationParams(n: NotificationSpec): string {
  const js = jsonOf(n.params, 'output');
  return js.title || js.anyOf ? typeText(js, false) : fields(n.params);
}

function eventsTable(): string {
  const rows = hostEvent.options.map((o) => {
    const type = o.shape.type.value;
    const own = Object.keys(o.shape).filter((k) => !['session', 'seq', 'at', 'type'].includes(k));
    const js = jsonOf(o, 'output');
    const fieldsOf = own.map((k) => `\`${k}\` (${typeText(js.properties![k], false)})`).join(', ') || '—';
    return `| \`${type}\` | ${fieldsOf} | ${cell(EVENT_MEANINGS[type])} |`;
  });
  return ['| `type` | fields | when |', '|---|---|---|', ...rows].join('\n');
}

/** The named shapes results and notifications refer to, that no hand-written table of their own describes. */
const SHAPES: readonly z.ZodObject[] = [lastInput, agentApprovalNow, tokenInfo, approvalRequest, approvalQuestion];

function shapesTable(): string {
  return SHAPES.map((shape) => `\`${jsonOf(shape, 'output').title}\`:\n\n${fieldsTable(shape, 'output')}`).join('\n\n');
}

/**
 * Shapes whose table is written by hand (its meanings say more than the schema's descriptions):
 * the table must name exactly the schema's fields, so a field added to one is added to the other.
 */
const HAND_TABLES: readonly { header: string; shape: z.ZodObject }[] = [
  { header: '| field | type | meaning |', shape: sessionInfo },
  { header: '| `CommandRecord` field | type | meaning |', shape: commandRecord },
];

function checkHandTables(doc: string): void {
  for (const { header, shape } of HAND_TABLES) {
    const at = doc.indexOf(`\n${header}\n`);
    if (at < 0) throw new Error(`docs/protocol.md has no table headed ${header}`);
    const rows = doc.slice(at + header.length + 2).split('\n');
    const names = rows
      .slice(
        1,
        rows.findIndex((l, i) => i > 0 && !l.startsWith('|')),
      )
      .flatMap((l) => l.split('|')[1].split(','))
      .map((n) => n.trim().replace(/`/g, ''));
    const want = Object.keys(shape.shape);
    const missing = want.filter((n) => !names.includes(n));
    const extra = names.filter((n) => !want.includes(n));
    if (missing.length || extra.length) {
      throw new Error(
        `the table headed ${header} in docs/protocol.md does not match the schema: ${missing.length ? `missing ${missing.join(', ')}` : ''}${extra.length ? ` not in the schema: ${extra.join(', ')}` : ''}`,
      );
    }
  }
}

/**
 * What an entry of `ERROR_CODES` may say beyond its code, name and when: what its `data` carries, its
 * REST code (and so its HTTP status) and, for a kind of failure answered as -32000, its `reason`.
 */
interface ErrorCodeMore {
  data?: string;
  rest?: string;
  reason?: string;
}

function errorsTable(): string {
  const entries = ERROR_CODES as readonly ((typeof ERROR_CODES)[number] & ErrorCodeMore)[];
  const status = (errors as { REST_STATUS?: Record<string, number> }).REST_STATUS;
  const code = (e: ErrorCodeMore & { code: number }) => (e.reason === undefined ? `${e.code}` : `-32000, \`reason: "${e.reason}"\``);
  if (!entries.some((e) => e.rest !== undefined) || !status) {
    const rows = entries.map((e) => `| ${code(e)} | ${e.name} | ${cell(e.when)} |`);
    return ['| code | name | when |', '|---|---|---|', ...rows].join('\n');
  }
  const rows = entries.map(
    (e) => `| ${code(e)} | ${e.name} | ${e.rest ? `${status[e.rest]} \`${e.rest}\`` : ''} | ${cell(e.when)} | ${e.data === undefined ? '' : cell(e.data)} |`,
  );
  return ['| code | name | REST (HTTP status, `error.code`) | when | `data` |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** The stream WebSocket's messages (§5), from their schemas: the shape, each field's type and meaning. */
function streamTable(): string {
  const rows = (STREAM_FRAMES as readonly StreamFrameSpec[]).map((f) => {
    const js = jsonOf(f.schema, f.from === 'host' ? 'output' : 'input');
    const required = new Set(js.required ?? []);
    const described = Object.entries(js.properties ?? {})
      .filter(([name]) => name !== 'type')
      .map(([name, p]) => `\`${name}\` (${typeText(p, false)}${required.has(name) ? '' : ', optional'})${p.description ? `: ${p.description}` : '.'}`);
    const direction = f.from === 'host' ? 'host → client' : 'client → host';
    return `| ${direction} | ${typeText(js)} | ${cell(f.summary)} | ${cell(described.join(' ') || '—')} |`;
  });
  return ['| direction | message | what it is | fields |', '|---|---|---|---|', ...rows].join('\n');
}

/** The stream WebSocket's close codes (§5); the host's own (4000–4999) in bold. */
function streamCloseTable(): string {
  const rows = (Object.values(STREAM_CLOSE) as readonly StreamCloseSpec[]).map(({ code, meaning }) => {
    const own = code >= 4000 && code <= 4999;
    return `| ${own ? `**${code}**` : code} | ${cell(meaning)} |`;
  });
  return ['| close code | meaning |', '|---|---|', ...rows].join('\n');
}

/** REST's error codes (§5): the HTTP status, HTTP's own reasons, and the JSON-RPC codes each stands for. */
function restStatusTable(): string {
  const rows = Object.entries(errors.REST_STATUS).map(([code, status]) => {
    const rpc = (ERROR_CODES as readonly ((typeof ERROR_CODES)[number] & ErrorCodeMore)[])
      .filter((e) => e.rest === code)
      .map((e) => (e.reason === undefined ? `${e.code} ${e.name}` : `-32000 \`${e.reason}\` (${e.name}, with \`rpcCode\` and \`data\`)`));
    return `| \`${code}\` | ${status} | ${cell(errors.REST_MEANINGS[code as keyof typeof errors.REST_MEANINGS] ?? '—')} | ${rpc.join(', ') || '—'} |`;
  });
  return ["| code | HTTP | before any method runs | a method's error answered with it |", '|---|---|---|---|', ...rows].join('\n');
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
    const hints = [
      t.annotations.readOnlyHint ? 'read-only' : '',
      t.annotations.destructiveHint ? 'destructive' : '',
      t.annotations.openWorldHint ? 'open world' : '',
    ]
      .filter(Boolean)
      .join(', ');
    const mcp = t.method.mcp!;
    const notes = [
      ...Object.entries(mcp.fixed ?? {}).map(([k, v]) => `\`${k}: ${JSON.stringify(v)}\``),
      ...Object.entries(mcp.defaults ?? {}).map(([k, v]) => `\`${k}\` defaults to ${JSON.stringify(v)}`),
      mcp.input
        ? `its params made from ${Object.keys(mcp.input.shape)
            .map((k) => `\`${k}\``)
            .join(', ')}`
        : '',
    ].filter(Boolean);
    const method = `\`${t.method.name}\`${notes.length ? ` (${notes.join('; ')})` : ''}`;
    // What the tool serves: a budgeted tool adds its counts (§9.5), one that shows the view its session (§9.7).
    const result = fields(t.output);
    const name =
      mcp.app === 'shows' ? `\`${t.name}\` (shows the terminal view)` : mcp.app === 'feeds' ? `\`${t.name}\` (the terminal view's own)` : `\`${t.name}\``;
    return `| ${name} | ${input} | ${method} | ${result} | ${t.method.scope}${hints ? ` (${hints})` : ''} |`;
  });
  return ['| tool | input | JSON-RPC method | structured result | scope |', '|---|---|---|---|---|', ...rows].join('\n');
}

const REGION = /(<!-- generated: ([\w-]+)(?: ([\w/]+))? -->\n)[\s\S]*?(<!-- end generated -->)/g;

/** The reference with every generated region rewritten from the table; throws when a method has no block of its own. */
export function renderProtocolDoc(doc: string): string {
  const tables: Record<string, () => string> = {
    methods: () => methodsTable(doc),
    notifications: notificationsTable,
    events: eventsTable,
    errors: errorsTable,
    shapes: shapesTable,
    rest: restTable,
    stream: streamTable,
    'stream-close': streamCloseTable,
    'rest-status': restStatusTable,
    tools: toolsTable,
  };
  checkHandTables(doc);
  const documented = new Set<string>();
  const out = doc.replace(REGION, (all, open: string, kind: string, name: string | undefined, close: string) => {
    if (kind === 'method' && name) {
      documented.add(name);
      return `${open}${methodBlock(name)}\n${close}`;
    }
    return kind in tables && !name ? `${open}${tables[kind]()}\n${close}` : all;
  });
  const missing = TABLE.filter((m) => !documented.has(m.name)).map((m) => m.name);
  if (missing.length)
    throw new Error(
      `docs/protocol.md has no "<!-- generated: method NAME -->" block for ${missing.join(', ')}: add one in the method's section, then run ${REGENERATE}`,
    );
  return out;
}

/** The first line where two texts differ (1-based), for the message that says the reference is stale. */
function firstDifference(a: string, b: string): number {
  const x = a.split('\n');
  const y = b.split('\n');
  const i = x.findIndex((l, n) => l !== y[n]);
  return (i < 0 ? Math.min(x.length, y.length) : i) + 1;
}

if (require.main === module) {
  const doc = fs.readFileSync(PROTOCOL_DOC, 'utf8');
  let next: string;
  try {
    next = renderProtocolDoc(doc);
  } catch (e) {
    process.stderr.write(`docs/protocol.md cannot be generated: ${(e as Error).message}\n`);
    process.exit(1);
  }
  if (process.argv.includes('--write')) {
    fs.writeFileSync(PROTOCOL_DOC, next);
    process.stdout.write(next === doc ? 'docs/protocol.md is current\n' : 'docs/protocol.md rewritten from the method table\n');
  } else if (next === doc) process.stdout.write('docs/protocol.md is current\n');
  else {
    process.stderr.write(
      `docs/protocol.md is not what the method table generates (first difference at line ${firstDifference(doc, next)}): regenerate it with ${REGENERATE}, and commit it\n`,
    );
    process.exitCode = 1;
  }
}

/** What a method's page says of an exited session: refused, or refused but for the calls the method lets through. */
function exitedNote(needsRunning: unknown): string {
  if (!needsRunning) return '';
  const refused = '; refused once the session has exited ([error codes](#4-error-codes))';
  return typeof needsRunning === 'function' ? `${refused}, but for a call that types nothing (below)` : refused;
}
