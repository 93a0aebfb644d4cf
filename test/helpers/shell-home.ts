// A home folder for bash, zsh or fish whose prompt is `my> ` (and nothing else on the screen: no
// greeting, no history file), for tests that run a shell with its integration as a user has it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export type TestShell = 'bash' | 'zsh' | 'fish';

/** What `session/create` (or MCP `open_session`) takes to start `shell` in a fresh home; `home` is for removing it. */
export function promptedShell(shell: TestShell): { command: TestShell; cwd: string; env: Record<string, string>; home: string } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-shell-'));
  fs.writeFileSync(path.join(home, '.bashrc'), "PS1='my> '\nHISTFILE=/dev/null\n");
  fs.writeFileSync(path.join(home, '.zshrc'), "PROMPT='my> '\nunset HISTFILE\n");
  fs.mkdirSync(path.join(home, '.config', 'fish'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config', 'fish', 'config.fish'), "function fish_prompt; echo -n 'my> '; end\nfunction fish_greeting; end\n");
  // A fish that has run before: without generated completions fish generates them from every man
  // page at each start, in its own process group, and its foreground never looks idle.
  fs.mkdirSync(path.join(home, '.local', 'share', 'fish', 'generated_completions'), { recursive: true });
  const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share') };
  return { command: shell, cwd: home, env, home };
}
