import * as vscode from 'vscode';

/** True when a failure comes from the native PTY module not loading in the host. */
export function isNodePtyLoadError(message: string): boolean {
  return /node-pty|pty\.node|NODE_MODULE_VERSION|Cannot find module .*pty/i.test(message);
}

/** The first line of an error's message, without a stack trace. */
export function errorText(e: unknown): string {
  const raw = e instanceof Error ? e.message : String(e);
  return raw.split('\n')[0].trim() || 'Unknown error';
}

/**
 * Shows one error notification for a failed action: a plain sentence saying what to do, never a
 * stack trace. The full error goes to the log.
 */
export function showError(what: string, e: unknown, log: vscode.LogOutputChannel, extensionPath: string): void {
  const text = errorText(e);
  log.error(`${what}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  if (isNodePtyLoadError(text)) {
    void vscode.window.showErrorMessage(
      `Shared PTY: the terminal module (node-pty) could not be loaded by the Shared PTY host, neither the extension's own copy nor the editor's. ` +
        `Reinstall the extension, or rebuild it for this platform: run "npm rebuild node-pty" in ${extensionPath}. (${text})`,
    );
    return;
  }
  void vscode.window.showErrorMessage(`Shared PTY: ${what}: ${text}`);
}
