import * as path from 'node:path';
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

/**
 * node-pty, loaded on first use so that importing the engine stays cheap. When the bundled copy
 * cannot load (no build for this platform), the copies named in $SHARED_PTY_NODE_PTY_FALLBACK
 * (path-delimited; the editor passes its own `<appRoot>/node_modules/node-pty`) are tried in order.
 */
export function loadNodePty(): NodePtyModule {
  if (override) return override;
  if (!loaded) {
    try {
      loaded = require('node-pty') as NodePtyModule;
    } catch (e) {
      const fallbacks = (process.env.SHARED_PTY_NODE_PTY_FALLBACK ?? '').split(path.delimiter).filter(Boolean);
      for (const candidate of fallbacks) {
        try {
          loaded = require(candidate) as NodePtyModule;
          break;
        } catch {
          // try the next one; the bundled copy's error is the one worth reporting
        }
      }
      if (!loaded) throw e;
    }
  }
  return loaded;
}
