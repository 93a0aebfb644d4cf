/** Command ids, as contributed in package.json. */
export const Commands = {
  open: 'sharedPty.open',
  listSessions: 'sharedPty.listSessions',
  copyMcpConfig: 'sharedPty.copyMcpConfig',
  replayRecording: 'sharedPty.replayRecording',
  installCli: 'sharedPty.installCli',
} as const;

/** Ids of other contributions. */
export const Ids = {
  terminalProfile: 'sharedPty.profile',
  mcpProvider: 'sharedPty.mcp',
  statusBar: 'sharedPty.status',
  /** workspaceState key: the sessions this window shows, re-opened after a reload. */
  rememberedSessions: 'sharedPty.sessions',
  /** workspaceState key: which of them was the terminal in front, put in front again after a reload. */
  frontSession: 'sharedPty.frontSession',
} as const;

/** The MCP server's label in the editor (docs/editor.md#mcp-registration). */
export const MCP_LABEL = 'Shared PTY';
