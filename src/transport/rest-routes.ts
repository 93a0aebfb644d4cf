import type { IncomingMessage, ServerResponse } from 'node:http';
import { invoke } from '../core/methods/dispatch';
import { oneShotCaller } from '../core/io/caller';
import { invalidParams } from '../core/base/errors';
import { SessionTuning } from '../core/session/session';
import type { HostServices, SessionInfo } from '../core/methods/types';
import { readJsonBody, requestSignal, sendError, sendOk, sendRpcError } from './http-util';

/** Every REST request is a one-shot script call. */
const REST_CALLER = oneShotCaller('script', 'rest');

/** How long DELETE waits for the program's end: the kill's SIGKILL grace and a margin. */
const KILL_ANSWER_WAIT_MS = SessionTuning.KillGraceMs + 1000;

/** The REST routes of seeds/pty-session-mcp.md, each a thin mapping onto the method table. */
export async function handleRest(services: HostServices, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const parts = url.pathname.split('/').filter(Boolean);
  if (parts[0] !== 'sessions' || parts.length > 3) return false;
  const signal = requestSignal(req, res);
  const call = (method: string, params: Record<string, unknown>) =>
    invoke(method, params, { mode: { kind: 'control' }, services, caller: REST_CALLER, signal });
  const id = parts[1] ? decodeURIComponent(parts[1]) : undefined;
  const action = parts[2];
  try {
    if (!id && req.method === 'GET') {
      const r = (await call('session/list', {})) as { sessions: SessionInfo[] };
      return sendOk(res, r.sessions), true;
    }
    if (!id && req.method === 'POST') {
      const body = await readJsonBody(req);
      return sendOk(res, await call('session/create', { origin: 'script', ...body })), true;
    }
    if (id && !action && req.method === 'GET') {
      const params = {
        session: id,
        since: numberParam(url, 'since'),
        waitMs: numberParam(url, 'waitMs'),
        maxBytes: numberParam(url, 'maxBytes'),
        strip: url.searchParams.has('strip') ? url.searchParams.get('strip') !== 'false' : undefined,
      };
      const r = (await call('pty/output', params)) as Record<string, unknown>;
      return sendOk(res, { id: canonicalId(services, id), ...r }), true;
    }
    if (id && !action && req.method === 'DELETE') {
      const sessionId = canonicalId(services, id);
      const signalName = url.searchParams.get('signal');
      if (signalName) await call('pty/signal', { session: sessionId, signal: signalName });
      const session = services.registry.resolve(sessionId);
      await call('pty/kill', { session: sessionId });
      // Answer with how it ended (as pty-session-mcp's kill does); a program that outlives its
      // SIGKILL grace is reported still running.
      await Promise.race([session.exited, new Promise((r) => setTimeout(r, KILL_ANSWER_WAIT_MS).unref())]);
      return sendOk(res, { id: sessionId, ok: true, running: session.running, exitCode: session.exitCode }), true;
    }
    if (id && action === 'write' && req.method === 'POST') {
      const body = await readJsonBody(req);
      if (typeof body.data !== 'string') throw invalidParams('data must be a string');
      if (body.submit !== undefined && typeof body.submit !== 'boolean') throw invalidParams('submit must be true or false');
      let data = body.data;
      // As pty-session-mcp: submit (default true) appends a newline unless one is there.
      if (body.submit !== false && !/[\r\n]$/.test(data)) data += '\n';
      const r = (await call('pty/write', { session: id, action: { text: data } })) as { written: number };
      return sendOk(res, { id: canonicalId(services, id), bytes: r.written }), true;
    }
    if (id && action === 'resize' && req.method === 'POST') {
      const body = await readJsonBody(req);
      const sessionId = canonicalId(services, id);
      const session = services.registry.resolve(sessionId);
      if (!session.running) throw invalidParams('The session has exited');
      await call('pty/resize', { session: sessionId, cols: body.cols, rows: body.rows });
      return sendOk(res, await call('pty/info', { session: sessionId })), true;
    }
    if (id && (action === undefined || action === 'write' || action === 'resize')) {
      sendError(res, 'NOT_FOUND', `No route for ${req.method} ${url.pathname}`);
      return true;
    }
    return false;
  } catch (e) {
    sendRpcError(res, e);
    return true;
  }
}

function canonicalId(services: HostServices, selector: string): string {
  return services.registry.resolve(selector).id;
}

function numberParam(url: URL, name: string): number | undefined {
  const v = url.searchParams.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw invalidParams(`${name} must be a number`);
  return n;
}
