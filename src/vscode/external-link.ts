import * as vscode from 'vscode';

/**
 * A link of the host's HTTP server (`http://127.0.0.1:<port>/…`) as the user's browser reaches it:
 * in an editor that runs in a browser or on another machine (code-server, Codespaces, Remote
 * tunnels, Remote-SSH), through the editor's port proxy or forward (`asExternalUri`: code-server
 * gives `<its address>/proxy/<port>/…`); in a local editor, the same link. The host opens its pages
 * there for the browser that trades the link (docs/protocol.md#pages-behind-an-editors-proxy).
 */
export async function externalLink(url: string): Promise<string> {
  const external = await vscode.env.asExternalUri(vscode.Uri.parse(url));
  // Unencoded: the link's query (`?token=`) and path are already in their final form.
  return external.toString(true);
}
