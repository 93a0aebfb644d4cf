import type * as NodePty from 'node-pty';

type NodePtyModule = typeof NodePty;
let loaded: NodePtyModule | undefined;
let override: NodePtyModule | undefined;

/**
 * Lets the editor hand in node-pty from another place (the editor's own copy) when the
 * bundled one cannot load. The engine itself only ever asks `loadNodePty()`.
 */
export function setNodePty(mod: NodePtyModule): void {
  override = mod;
}

/** node-pty, loaded on first use so that importing the engine stays cheap. */
export function loadNodePty(): NodePtyModule {
  if (override) return override;
  if (!loaded) loaded = require('node-pty') as NodePtyModule;
  return loaded;
}
