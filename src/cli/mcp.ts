import { CliError } from './find-session';

/** `mcp`: the stdio MCP server (built with the HTTP transports). */
export async function mcpCommand(_argv: string[]): Promise<number> {
  throw new CliError('the MCP server is not built yet');
}
