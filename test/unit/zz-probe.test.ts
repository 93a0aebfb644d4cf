import { test } from 'node:test';
import { execSync } from 'node:child_process';
import * as fs from 'node:fs';
import { connect, startHost } from '../helpers/host';
import { foregroundStateOf } from '../../src/core/process/proc-state';
test('probe', async () => {
  const h = await startHost();
  const c = await connect(h.host.controlAddress);
  fs.mkdirSync('/tmp/gsf2/.config/fish', { recursive: true });
  fs.writeFileSync('/tmp/gsf2/.config/fish/config.fish', "function fish_prompt; printf 'my> '; end\nset -g fish_greeting\nalias hi 'echo hello-from-my-alias'\nset -gx PATH $HOME/bin $PATH\nset -gx FROM_RC yes\n");
  fs.writeFileSync('/tmp/gsf2/.config/fish/fish_variables', 'SETUVAR __fish_initialized:3400\n');
  const info: any = await c.request('session/create', { command: 'fish', args: [], cwd: '/tmp/gsf2', env: { HOME: '/tmp/gsf2', XDG_CONFIG_HOME: '/tmp/gsf2/.config', SHARED_PTY_SHELL_INTEGRATION: '0' }, cols: 100, rows: 30 });
  for (let i = 0; i < 2; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    console.log(foregroundStateOf(info.pid), execSync(`ps -eo pid,pgid,tpgid,stat,wchan:20,cmd | awk '$2==${info.pid} || $1==${info.pid}'`).toString());
  }
  const r = await c.request('pty/send', { session: info.id, text: 'false', timeout: 5000 });
  console.log(r);
  console.log(execSync(`ps -eo pid,pgid,tpgid,stat,wchan:20,cmd | awk '$2==${info.pid} || $1==${info.pid}'`).toString());
  c.close(); await h.close();
});
