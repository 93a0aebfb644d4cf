// Every surface agrees with the method table: each MCP tool's schemas and hints, each REST route's
// validation and answer, and the error a call gets — the same code for an unknown session, bad
// params or an exited session over JSON-RPC, REST and MCP. Driven against a real host (node-pty,
// bash, its control socket, its HTTP server and the official MCP SDK client), so drift between a
// method and its tool or route fails here. The reference's tables are checked against the table too.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { MethodSpec } from '../../../../src/core/methods/spec';
import { METHODS } from '../../../../src/core/methods/table';
import { REST_ROUTES, type RestRoute } from '../../../../src/transport/http/rest-routes';
import { TOOLS, type ToolDef } from '../../../../src/transport/mcp/mcp-tools';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { RpcCallError } from '../../../../src/transport/client/rpc-client';
import { PROTOCOL_DOC, renderProtocolDoc } from '../../../../scripts/protocol-tables';
import { BASH, connect, until, withTimeout, clientsClosed } from '../../../helpers/host';
import { request, startHttpHost, type HttpHost } from '../../../helpers/http';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const TABLE = METHODS as readonly MethodSpec[];
/** The MCP tools of docs/protocol.md#6-mcp: the eleven first ones and those added since. */
/** The terminal view's keys: the one tool with an input of the MCP layer's own (the view's key). */
const APP_INPUT = 'app_input';
const DOCUMENTED_TOOLS = [
  'list_sessions',
  'open_session',
  'send',
  'send_keys',
  'read_screen',
  'read_scrollback',
  'read_output',
  'wait_for',
  'resize',
  'signal',
  'close_session',
  'list_commands',
  'wait_event',
  'read_command_output',
  'terminal_snapshot',
  'app_input',
];
/** The tools that return output take maxChars and add totalChars and elidedChars (docs/guarantees.md#output-budget-for-agents). */
const BUDGET_TOOLS = ['send', 'read_screen', 'read_scrollback', 'read_output', 'signal', 'send_keys'];
/** …of which these return output only sometimes (send_keys waits only when asked): their counts are optional. */
const SOMETIMES_OUTPUT = ['send_keys'];
/** The REST routes of docs/protocol.md#rest: the six original ones and ours for later methods. */
const DOCUMENTED_ROUTES = [
  'POST /sessions',
  'GET /sessions',
  'GET /sessions/:id',
  'POST /sessions/:id/write',
  'POST /sessions/:id/resize',
  'DELETE /sessions/:id',
  'GET /sessions/:id/commands',
];

/** A recording for host/replay's example (removed with the homes in after()). */
const EXAMPLE_CAST = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-surfaces-')), 'example.cast');
fs.writeFileSync(EXAMPLE_CAST, '{"version": 3, "term": {"cols": 80, "rows": 24}}\n[0.1, "o", "hi"]\n');

/**
 * A valid call of every method (session methods get `session` added). A new method needs a row
 * here, so it is checked on every surface from the day it lands.
 */
const EXAMPLES: Record<string, Record<string, unknown>> = {
  'pty/read': {},
  'pty/write': { action: { text: '' } },
  'pty/wait': { timeout: 0 },
  'pty/status': {},
  'pty/resize': { cols: 80, rows: 24 },
  'pty/kill': {},
  'pty/info': {},
  'pty/scrollback': {},
  'pty/output': {},
  'pty/send': { text: 'true', timeout: 20_000 },
  'pty/commands': { limit: 5 },
  'pty/commandOutput': { id: 1, maxBytes: 100 },
  'pty/signal': { signal: 'SIGCONT' },
  'pty/subscribe': {},
  'pty/unsubscribe': {},
  'pty/ack': { cursor: 0 },
  'pty/snapshot': {},
  'pty/appInput': { data: ' ' },
  'pty/secretPage': {},
  'pty/events': { since: 0 },
  'pty/waitEvent': { timeoutMs: 0 },
  'pty/record': { stop: true },
  'host/replay': { path: EXAMPLE_CAST },
  'session/keep': {},
  'session/viewUrl': { readOnly: true },
  'session/list': {},
  'session/create': { ...BASH },
  'host/info': {},
  'session/share': { scope: 'view', expiresIn: 60 },
  'host/tokens': {},
  'host/agentToken': { expiresIn: 60 },
  // A token's id: the test shares one first and puts its id here.
  'host/revoke': { id: '<shared just before>' },
  'host/watchAgents': {},
  'host/approve': { id: 'no-such-request', decision: 'deny' },
  'host/agentPolicy': {},
};
/** Params that are only valid together (`pty/read`'s row range): a bound check sets both. */
const PAIRED: Record<string, string> = { start: 'end', end: 'start' };
/** Methods whose example needs a command the shell reported: a session with shell integration that ran one. */
const NEEDS_COMMAND = new Set(['pty/commandOutput']);
/** Methods whose example needs a program that asks for a secret now. */
const NEEDS_SECRET_PROMPT = new Set(['pty/secretPage']);
/** Methods whose example ends or changes the session for good: they get a session of their own. */
const ENDS_SESSION = new Set(['pty/kill', 'session/keep']);
/** A write, signal or resize to a session whose program has ended (docs/protocol.md#4-error-codes). */
/** What every surface answers for an exited session: socket-pty's server error, `data.reason` saying which. */
const SESSION_EXITED = -32000;

type ToolResult = { content: Array<{ type: string; text?: string }>; structuredContent?: any; isError?: boolean };
type JsonSchema = Record<string, any>;

/** What a JSON schema constrains, whoever generated it (the SDK's converter or zod's own). */
function constraints(s: JsonSchema | undefined): unknown {
  if (!s) return undefined;
  const pick: JsonSchema = {};
  for (const k of ['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'enum', 'const', 'minLength', 'maxLength', 'minItems', 'maxItems']) {
    if (s[k] !== undefined) pick[k] = s[k];
  }
  if (s.items) pick.items = constraints(s.items);
  if (s.anyOf) pick.anyOf = s.anyOf.map(constraints);
  if (s.properties) pick.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, constraints(v as JsonSchema)]));
  if (s.required) pick.required = [...s.required].sort();
  return pick;
}

const jsonOf = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

/** The first numeric field with a lower bound, and that bound (a value just below it is invalid). */
function boundedFields(shape: z.ZodRawShape): Array<{ name: string; min: number; at(v: number): Record<string, number> }> {
  return Object.entries(shape).flatMap(([name, field]) => {
    const s = jsonOf(field as z.ZodType);
    const at = (v: number) => (PAIRED[name] && PAIRED[name] in shape ? { [name]: v, [PAIRED[name]]: v } : { [name]: v });
    return (s.type === 'integer' || s.type === 'number') && typeof s.minimum === 'number' ? [{ name, min: s.minimum, at }] : [];
  });
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('every surface agrees with the method table', () => {
  const homes: string[] = [];
  let h: HttpHost;
  let ctl: RpcClient;
  let mcp: Client;
  let tools: Array<{ name: string; inputSchema: JsonSchema; outputSchema?: JsonSchema; annotations?: Record<string, unknown> }>;

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);
  const rest = (verb: string, path: string, body?: unknown) => request(h.port, verb, path, { token: h.token, body });
  /** The key of the terminal view's page: app_input is the view's, which sends it with every call. */
  let appKey = '';
  const tool = async (name: string, args: Record<string, unknown>) =>
    (await mcp.callTool({ name, arguments: name === APP_INPUT ? { ...args, appKey } : args })) as ToolResult;
  const toolText = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('');

  async function openBash(): Promise<string> {
    const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24 });
    await until(async () => (await rpc('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
    return info.id as string;
  }

  /** A bash with shell integration (a HOME of its own) that has run command 1. */
  async function openBashWithCommand(): Promise<string> {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-surfaces-'));
    homes.push(home);
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='$ '\nHISTFILE=/dev/null\n");
    const info = await rpc('session/create', { command: 'bash', cwd: home, env: { HOME: home }, cols: 80, rows: 24 });
    await until(async () => (await rpc('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
    assert.equal((await rpc('pty/send', { session: info.id, text: 'true', timeout: 20_000 })).waitReason, 'command_done');
    return info.id as string;
  }

  /** A bash whose `read -s` asks for a secret now. */
  async function openBashAsking(): Promise<string> {
    const id = await openBash();
    await rpc('pty/write', { session: id, action: { text: 'read -s x\r' } });
    await until(async () => (await rpc('pty/info', { session: id })).secretInput, 10_000, 'a secret prompt');
    return id;
  }

  /** A session for the example of `spec`: the shared one, or one of its own when the example needs it. */
  async function sessionFor(spec: MethodSpec, shared: string): Promise<string> {
    if (NEEDS_COMMAND.has(spec.name)) return openBashWithCommand();
    if (NEEDS_SECRET_PROMPT.has(spec.name)) return openBashAsking();
    return ENDS_SESSION.has(spec.name) ? openBash() : shared;
  }

  /** The code a JSON-RPC call fails with (undefined: it succeeded). */
  async function rpcCode(method: string, params: Record<string, unknown>): Promise<number | undefined> {
    try {
      await rpc(method, params);
      return undefined;
    } catch (e) {
      if (e instanceof RpcCallError) return e.code;
      throw e;
    }
  }

  /** The code an MCP tool call fails with: its `Error <code>:` text, or a protocol error's code. */
  async function toolCode(name: string, args: Record<string, unknown>): Promise<number | undefined> {
    try {
      const r = await tool(name, args);
      if (!r.isError) return undefined;
      const m = /(?:Error|MCP error) (-\d+)/.exec(toolText(r));
      assert.ok(m, `${name} says its error code: ${toolText(r)}`);
      return Number(m[1]);
    } catch (e) {
      // A protocol error carries its code; anything else (a lost connection, a bug) is no answer.
      const code = (e as { code?: unknown }).code;
      if (typeof code !== 'number') throw e;
      return code;
    }
  }

  /** The REST request for a route with its input, and the JSON-RPC code its envelope's status stands for. */
  async function restCall(route: RestRoute, id: string | undefined, input: Record<string, unknown>) {
    const path = route.rest.path.replace(':id', encodeURIComponent(id ?? ''));
    const query = route.rest.from === 'query' ? new URLSearchParams(Object.entries(input).map(([k, v]) => [k, String(v)])).toString() : '';
    return rest(route.rest.verb, query ? `${path}?${query}` : path, route.rest.from === 'body' ? input : undefined);
  }

  /** A tool's own arguments for its method's params (the reverse of its projection, for checks). */
  function toolArgs(t: ToolDef, params: Record<string, unknown>): Record<string, unknown> | undefined {
    if (t.name === 'send_keys') return { keys: ['Enter'] };
    const mcp = t.method.mcp!;
    if (mcp.input) return undefined;
    return Object.fromEntries(Object.entries(params).filter(([k]) => !(mcp.omit ?? []).includes(k as never)));
  }

  before(async () => {
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
    // A chat host that renders MCP Apps (app_input, the view's keys, is refused to any other).
    const capabilities = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
    mcp = new Client({ name: 'surfaces-test', version: '0.0.0' }, { capabilities });
    const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token}` } } });
    await withTimeout(mcp.connect(transport), 20_000, 'MCP connect');
    tools = (await mcp.listTools()).tools as any;
    const page = (await mcp.readResource({ uri: 'ui://shared-pty/terminal' })).contents[0] as { text?: string };
    appKey = /<meta name="shared-pty-app-key" content="([^"]+)">/.exec(page.text ?? '')?.[1] ?? '';
    assert.ok(appKey, "the terminal view's page carries its key");
  });

  after(async () => {
    await mcp?.close().catch(() => {});
    ctl?.close();
    await h?.close();
    for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(path.dirname(EXAMPLE_CAST), { recursive: true, force: true });
  });

  test('the tools and routes are exactly the documented ones, each from one method', () => {
    assert.deepEqual(tools.map((t) => t.name).sort(), [...DOCUMENTED_TOOLS].sort());
    assert.deepEqual(REST_ROUTES.map((r) => `${r.rest.verb} ${r.rest.path}`).sort(), [...DOCUMENTED_ROUTES].sort());
    assert.deepEqual(Object.keys(EXAMPLES).sort(), TABLE.map((m) => m.name).sort(), 'every method has an example call here');
  });

  test("each tool takes its method's params with the same constraints, returns its result, and is read-only exactly when the method only reads", () => {
    for (const served of tools) {
      const def = TOOLS.find((t) => t.name === served.name)!;
      const spec = def.method;
      const props = served.inputSchema.properties ?? {};
      for (const [name, prop] of Object.entries(props)) {
        if (name === 'session') {
          assert.equal(spec.target, 'session', `${served.name}: only session methods take session`);
          assert.ok(served.inputSchema.required?.includes('session'), `${served.name}: session is required`);
          continue;
        }
        const field = spec.params.shape[name] as z.ZodType | undefined;
        if (name === 'maxChars' && !field) {
          assert.ok(BUDGET_TOOLS.includes(served.name), `${served.name} returns no output, so takes no maxChars`);
          continue;
        }
        if (name === 'appKey' && !field) {
          assert.equal(served.name, APP_INPUT, `${served.name}: only the view's keys carry the view's key`);
          continue;
        }
        if (!field) {
          assert.ok(spec.mcp?.input, `${served.name}.${name} is not a param of ${spec.name}`);
          continue;
        }
        assert.deepEqual(constraints(prop as JsonSchema), constraints(jsonOf(field)), `${served.name}.${name} differs from ${spec.name}.${name}`);
        const required = served.inputSchema.required?.includes(name) ?? false;
        assert.equal(required, !field.safeParse(undefined).success, `${served.name}.${name}: required on one surface only`);
      }
      if (!spec.mcp?.input) {
        const offered = Object.keys(spec.params.shape).filter((k) => !(spec.mcp?.omit ?? []).includes(k as never));
        const budget = BUDGET_TOOLS.includes(served.name) ? ['maxChars'] : [];
        const key = served.name === APP_INPUT ? ['appKey'] : [];
        assert.deepEqual(
          Object.keys(props)
            .filter((k) => k !== 'session')
            .sort(),
          [...offered, ...budget, ...key].sort(),
          `${served.name} offers every param of ${spec.name}`,
        );
      }
      // A tool that returns output adds its budget's counts (docs/guarantees.md#output-budget-for-agents); one that shows the
      // terminal view also names its session (docs/guarantees.md#the-terminal-in-the-agents-chat).
      const own = (spec.mcp?.output?.schema ?? spec.result) as z.ZodObject;
      const count = SOMETIMES_OUTPUT.includes(served.name) ? z.number().optional() : z.number();
      const budgeted = BUDGET_TOOLS.includes(served.name) ? own.extend({ totalChars: count, elidedChars: count }) : own;
      const result = spec.mcp?.app === 'shows' ? budgeted.extend({ session: z.string() }) : budgeted;
      assert.deepEqual(
        constraints(served.outputSchema),
        constraints(jsonOf(result)),
        `${served.name}: outputSchema is ${spec.name}'s result${spec.mcp?.app === 'shows' ? ' and session' : ''}`,
      );
      assert.equal(served.annotations?.readOnlyHint, spec.scope === 'read', `${served.name}: readOnlyHint follows scope ${spec.scope}`);
      // A tool that types into a shell or starts a program may do anything (MCP's default for a write is destructive).
      if (['send', 'send_keys', 'open_session', 'app_input'].includes(served.name)) {
        assert.deepEqual([served.annotations?.destructiveHint, served.annotations?.openWorldHint], [true, true], `${served.name}: destructive, open world`);
      }
    }
  });

  test(
    'every method answers its example over JSON-RPC with exactly its result schema, and each route and tool succeeds too',
    { timeout: 120_000 },
    async () => {
      const shared = await openBash();
      for (const spec of TABLE) {
        const session = spec.target !== 'host' ? await sessionFor(spec, shared) : undefined;
        const params: Record<string, unknown> = { ...(session ? { session } : {}), ...EXAMPLES[spec.name] };
        if (spec.name === 'host/revoke') params.id = (await rpc('session/share', { session: shared })).info.id;
        const r = await rpc(spec.name, params);
        assert.deepEqual(spec.result.parse(r), r, `${spec.name}: its result has exactly the fields of its schema`);
        if (spec.name === 'session/create') await rpc('pty/kill', { session: r.id });
      }
      for (const route of REST_ROUTES) {
        const spec = route.method;
        const session = spec.target === 'session' ? (NEEDS_COMMAND.has(spec.name) ? await openBashWithCommand() : await openBash()) : undefined;
        const input = route.rest.input ? { data: 'x', submit: false } : EXAMPLES[spec.name];
        const a = await restCall(route, session, spec.name === 'pty/kill' ? {} : input);
        assert.equal(a.status, 200, `${route.rest.verb} ${route.rest.path}: ${a.text}`);
        if (!route.rest.respond) assert.deepEqual(spec.result.parse(a.json.data), a.json.data, `${route.rest.path} answers ${spec.name}'s result`);
        if (spec.name === 'session/create') await rpc('pty/kill', { session: a.json.data.id });
        if (session && spec.name !== 'pty/kill') await rpc('pty/kill', { session });
      }
      for (const def of TOOLS) {
        const session = def.method.target === 'session' ? (NEEDS_COMMAND.has(def.method.name) ? await openBashWithCommand() : await openBash()) : undefined;
        const args = { ...(session ? { session } : {}), ...(toolArgs(def, EXAMPLES[def.method.name]) ?? {}) };
        const r = await tool(def.name, args);
        assert.notEqual(r.isError, true, `${def.name}: ${toolText(r)}`);
        assert.ok(r.structuredContent, `${def.name} returns structuredContent`);
        if (BUDGET_TOOLS.includes(def.name) && !SOMETIMES_OUTPUT.includes(def.name))
          assert.equal(r.structuredContent.elidedChars, 0, `${def.name}: nothing left out of a short output`);
        if (def.name === 'open_session') await rpc('pty/kill', { session: r.structuredContent.id });
        if (session && def.name !== 'close_session') await rpc('pty/kill', { session });
      }
      await rpc('pty/kill', { session: shared });
    },
  );

  test('an unknown session is -32001 on every surface (REST: 404)', { timeout: 60_000 }, async () => {
    for (const spec of TABLE.filter((m) => m.target !== 'host')) {
      assert.equal(await rpcCode(spec.name, { ...EXAMPLES[spec.name], session: 'nosuch' }), -32001, spec.name);
    }
    for (const route of REST_ROUTES.filter((r) => r.method.target === 'session')) {
      const a = await restCall(route, 'nosuch', route.rest.input ? { data: 'x' } : EXAMPLES[route.method.name]);
      assert.equal(a.status, 404, `${route.rest.verb} ${route.rest.path}: ${a.text}`);
      assert.equal(a.json.error.code, 'NOT_FOUND');
    }
    for (const def of TOOLS.filter((t) => t.method.target === 'session')) {
      assert.equal(await toolCode(def.name, { session: 'nosuch', ...toolArgs(def, EXAMPLES[def.method.name]) }), -32001, def.name);
    }
  });

  test(
    "a value below a param's bound is -32602 on every surface (REST: 400), and the bound itself is accepted on every surface",
    { timeout: 120_000 },
    async () => {
      const session = await openBash();
      for (const spec of TABLE.filter((m) => !ENDS_SESSION.has(m.name) && m.name !== 'session/create')) {
        const own = NEEDS_COMMAND.has(spec.name) ? await openBashWithCommand() : session;
        const base = { ...(spec.target !== 'host' ? { session: own } : {}), ...EXAMPLES[spec.name] };
        const def = TOOLS.find((t) => t.method === spec);
        const route = REST_ROUTES.find((r) => r.method === spec && !r.rest.input);
        for (const { name, min, at } of boundedFields(spec.params.shape)) {
          assert.equal(await rpcCode(spec.name, { ...base, ...at(min - 1) }), -32602, `${spec.name}.${name} = ${min - 1}`);
          assert.equal(await rpcCode(spec.name, { ...base, ...at(min) }), undefined, `${spec.name}.${name} = ${min}`);
          if (def && !def.method.mcp?.input && !(def.method.mcp?.omit ?? []).includes(name as never)) {
            assert.equal(await toolCode(def.name, { ...base, ...at(min - 1) }), -32602, `${def.name}.${name} = ${min - 1}`);
            assert.equal(await toolCode(def.name, { ...base, ...at(min) }), undefined, `${def.name}.${name} = ${min}`);
          }
          if (route) {
            const id = spec.target === 'session' ? own : undefined;
            const { session: _s, ...input } = base as Record<string, unknown>;
            const bad = await restCall(route, id, { ...input, ...at(min - 1) });
            assert.equal(bad.status, 400, `${route.rest.path} ${name} = ${min - 1}: ${bad.text}`);
            assert.equal(bad.json.error.code, 'BAD_REQUEST');
            const ok = await restCall(route, id, { ...input, ...at(min) });
            assert.equal(ok.status, 200, `${route.rest.path} ${name} = ${min}: ${ok.text}`);
          }
        }
      }
      await rpc('pty/kill', { session });
    },
  );

  test(
    'writing or sending to, signalling or resizing an exited session is -32000 (reason session_exited) on every surface (REST: 400 with rpcCode -32000)',
    { timeout: 60_000 },
    async () => {
      const info = await rpc('session/create', { command: 'true' });
      await until(async () => !(await rpc('pty/status', { session: info.id })).running, 10_000, 'the program to end');
      const needsRunning = TABLE.filter((m) => m.needsRunning);
      assert.deepEqual(needsRunning.map((m) => m.name).sort(), ['pty/appInput', 'pty/resize', 'pty/secretPage', 'pty/send', 'pty/signal', 'pty/write']);
      for (const spec of needsRunning) {
        assert.equal(await rpcCode(spec.name, { ...EXAMPLES[spec.name], session: info.id }), SESSION_EXITED, spec.name);
        // A method no tool projects (pty/secretPage: the tools offer it only inside a refusal) is checked over JSON-RPC.
        const def = TOOLS.find((t) => t.method === spec);
        if (def) assert.equal(await toolCode(def.name, { session: info.id, ...toolArgs(def, EXAMPLES[spec.name]) }), SESSION_EXITED, def.name);
        const route = REST_ROUTES.find((r) => r.method === spec);
        if (route) {
          const a = await restCall(route, info.id, route.rest.input ? { data: 'x' } : EXAMPLES[spec.name]);
          assert.equal(a.status, 400, `${route.rest.path}: ${a.text}`);
          assert.equal(a.json.error.code, 'BAD_REQUEST');
          assert.equal(a.json.error.rpcCode, SESSION_EXITED);
          assert.equal(a.json.error.data.reason, 'session_exited');
          assert.match(a.json.error.message, /exited/);
        }
      }
      await rpc('pty/kill', { session: info.id });
    },
  );

  test("docs/protocol.md's method, REST and tool tables are the table's (npm run docs rewrites them)", () => {
    const doc = fs.readFileSync(PROTOCOL_DOC, 'utf8');
    assert.equal(renderProtocolDoc(doc), doc);
  });
});
