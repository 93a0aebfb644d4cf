import * as path from 'node:path';
import type * as NodePty from 'node-pty';

type NodePtyModule = typeof NodePty;
let loaded: NodePtyModule | undefined;

/**
 * node-pty, loaded on first use so that importing the engine stays cheap. When the bundled copy
 * cannot load (no build for this platform), the copies named in $SHARED_PTY_NODE_PTY_FALLBACK
 * (path-delimited; the editor passes its own `<appRoot>/node_modules/node-pty`) are tried in order.
 */
export function loadNodePty(): NodePtyModule {
  if (!loaded) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when the first session starts, with fallbacks
      loaded = require('node-pty') as NodePtyModule;
    } catch (e) {
      const fallbacks = (process.env.SHARED_PTY_NODE_PTY_FALLBACK ?? '').split(path.delimiter).filter(Boolean);
      for (const candidate of fallbacks) {
        try {
          // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fallback path known only at run time
          loaded = require(candidate) as NodePtyModule;
          break;
        } catch {
          // try the next one; the bundled copy's error is the one worth reporting
        }
      }
      if (!loaded) throw noNativeModule(e);
    }
  }
  return loaded;
}

/**
 * The bundled node-pty would not load: said in one line, with what to do. Its own message is a
 * require stack of several lines; without a native module (an install whose scripts did not run)
 * no session can start here.
 */
export function noNativeModule(e: unknown): Error {
  const first = (e instanceof Error ? e.message : String(e)).split('\n')[0];
  if (!/native module|pty\.node|Cannot find module/.test(first)) return e instanceof Error ? e : new Error(first);
  return new Error(
    `node-pty has no native module for this machine (${first.slice(0, 120)}); reinstall with its install script allowed (npm install -g --allow-scripts=node-pty,koffi …) or run npm rebuild node-pty`,
  );
}
