import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HostServices } from '../core/types';
import type { Access } from './http-security';
import { sendError } from './http-util';

/** The browser view of a session (built with the view bundle). */
export function handleViewPage(services: HostServices, req: IncomingMessage, res: ServerResponse, url: URL, access: Access): void {
  void services;
  void req;
  void url;
  void access;
  sendError(res, 'NOT_FOUND', 'The browser view is not built');
}

export function handleViewAsset(req: IncomingMessage, res: ServerResponse, url: URL): void {
  void req;
  void url;
  sendError(res, 'NOT_FOUND', 'The browser view is not built');
}
