/** How an MCP server reaches sessions: in the host itself, or through the sockets of every host (stdio). */
export interface ToolBackend {
  /** Calls a method of the table; session-scoped methods carry `session` in params. */
  call(method: string, params: Record<string, unknown>): Promise<unknown>;
}
