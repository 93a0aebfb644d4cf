import { test } from 'node:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect, until } from './helpers/host';
import { startHttpHost } from './helpers/http';
test('scratch', { timeout: 120000 }, async () => {
  const h = await startHttpHost();
  const ctl = await connect(h.host.controlAddress);
  for (const shell of ['bash', 'zsh', 'fish']) {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-scratch-'));
    fs.writeFileSync(path.join(home, '.zshrc'), "PROMPT='my> '\nunset HISTFILE\n");
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='my> '\n");
    fs.mkdirSync(path.join(home, '.config', 'fish'), { recursive: true });
    fs.writeFileSync(path.join(home, '.config', 'fish', 'config.fish'), "function fish_prompt; echo -n 'my> '; end\nfunction fish_greeting; end\n");
    const info = await ctl.request<any>('session/create', { command: shell, cwd: home, env: { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') }, origin: 'agent' });
    await until(async () => (await ctl.request<any>('pty/read', { session: info.id })).screen.includes('my>'), 20000, 'p');
    await ctl.request<any>('pty/send', { session: info.id, text: 'true' });
    const r = await ctl.request<any>('pty/send', { session: info.id, text: 'yes', timeout: 500 });
    console.log(shell, r.waitReason);
    const t = Date.now();
    const s = await ctl.request<any>('pty/signal', { session: info.id, signal: 'SIGINT', wait: true });
    console.log(shell, Date.now() - t, JSON.stringify({ ...s, output: s.output.slice(-60) }));
    const c = await ctl.request<any>('pty/commands', { session: info.id });
    console.log(shell, JSON.stringify(c.commands.at(-1)));
  }
  ctl.close(); await h.close();
});
