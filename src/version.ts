declare const __SHARED_PTY_VERSION__: string | undefined;

/** The product version: injected by the bundler, read from package.json when run from source. */
export const VERSION: string =
  typeof __SHARED_PTY_VERSION__ === 'string' ? __SHARED_PTY_VERSION__ : (require('../package.json') as { version: string }).version;
