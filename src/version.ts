declare const __SHARED_PTY_VERSION__: string | undefined;

/** The product version: injected by the bundler, read from package.json when run from source. */
export const VERSION: string =
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- only when run from source, where the bundler injected nothing
  typeof __SHARED_PTY_VERSION__ === 'string' ? __SHARED_PTY_VERSION__ : (require('../package.json') as { version: string }).version;
