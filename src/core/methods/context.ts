import { ErrorCode, RpcError } from '../base/errors';
import type { Session } from '../session/session';
import type { MethodContext } from './types';

/** The session of a session method's call (dispatch has resolved it before the handler runs). */
export function requireSession(ctx: MethodContext): Session {
  if (!ctx.session) throw new RpcError(ErrorCode.InvalidParams, 'Missing session');
  return ctx.session;
}
