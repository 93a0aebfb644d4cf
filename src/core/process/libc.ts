import type * as Koffi from 'koffi';

/**
 * A function of the C library bound through the koffi FFI (a Node-API module shipped prebuilt for
 * each platform, so it loads in Node and in the editor's Electron alike), looked up in the
 * process's own symbols (dlopen(NULL)), whichever libc that is. Linux only: the callers read
 * Linux's layouts and ioctls. Null when it cannot be had (another platform, no prebuilt koffi):
 * the caller falls back. koffi is loaded on first use, never at start-up.
 */
export function libcFunction<F>(declare: (libc: Koffi.LibraryHandle) => F): F | null {
  if (process.platform !== 'linux') return null;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on Linux only, when first asked
    const koffi = require('koffi') as typeof Koffi;
    return declare(koffi.load(null));
  } catch {
    return null;
  }
}
