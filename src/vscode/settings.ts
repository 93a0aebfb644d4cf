import * as vscode from 'vscode';

/** The `sharedPty.*` settings and their types (package.json `contributes.configuration`). */
export interface SettingTypes {
  shell: string;
  shellArgs: string[];
  shellIntegration: boolean;
  scrollbackLines: number;
  'http.enabled': boolean;
  'http.port': number;
  'mcp.enabled': boolean;
  sessionTcp: boolean;
  allowedOrigins: string[];
  runtimeDirectory: string;
  reattachSeconds: number;
  'agent.approval': string;
  'agent.denyCommands': string[];
}

export type SettingKey = keyof SettingTypes;

/** Defaults as the manifest declares them (used when a value is missing or of the wrong type). */
const DEFAULTS: SettingTypes = {
  shell: '',
  shellArgs: [],
  shellIntegration: true,
  scrollbackLines: 10000,
  'http.enabled': true,
  'http.port': 0,
  'mcp.enabled': true,
  sessionTcp: false,
  allowedOrigins: [],
  runtimeDirectory: '',
  reattachSeconds: 30,
  'agent.approval': 'ask',
  'agent.denyCommands': [],
};

/** The configuration section every key lives in. */
export const SECTION = 'sharedPty';

/** Reads one setting, falling back to its default when the user's value has the wrong shape. */
export function getSetting<K extends SettingKey>(key: K): SettingTypes[K] {
  const value = vscode.workspace.getConfiguration(SECTION).get<unknown>(key);
  const fallback = DEFAULTS[key];
  if (Array.isArray(fallback)) {
    return (Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : fallback) as SettingTypes[K];
  }
  return (typeof value === typeof fallback ? value : fallback) as SettingTypes[K];
}

/** True when a configuration change touches `key`. */
export function affects(e: vscode.ConfigurationChangeEvent, key: SettingKey): boolean {
  return e.affectsConfiguration(`${SECTION}.${key}`);
}
