import type { IUnicodeVersionProvider } from '@xterm/headless';

/**
 * Unicode widths of modern terminals (the `wcwidth` of Unicode 9 and later, as in VS Code's
 * Unicode 11 tables, glibc and tmux): East Asian Wide and Fullwidth characters and every emoji
 * with emoji presentation take two cells; combining marks, format characters and Hangul medial
 * and final jamo take none.
 */
export class ModernUnicodeWidths implements IUnicodeVersionProvider {
  static readonly VERSION = '11';
  readonly version = ModernUnicodeWidths.VERSION;
  /** BMP widths computed on first use; 3 = not computed yet. */
  private static readonly _bmp = new Uint8Array(65536).fill(3);

  wcwidth(cp: number): 0 | 1 | 2 {
    if (cp < 32) return 0;
    if (cp < 127) return 1;
    if (cp < 65536) {
      let w = ModernUnicodeWidths._bmp[cp];
      if (w === 3) w = ModernUnicodeWidths._bmp[cp] = computeWidth(cp);
      return w as 0 | 1 | 2;
    }
    return computeWidth(cp);
  }

  /** Same joining rule as xterm's own providers; the packing is xterm's (UnicodeService.createPropertyValue). */
  charProperties(cp: number, preceding: number): number {
    let width: number = this.wcwidth(cp);
    let shouldJoin = width === 0 && preceding !== 0;
    if (shouldJoin) {
      const oldWidth = (preceding >> 1) & 3;
      if (oldWidth === 0) shouldJoin = false;
      else if (oldWidth > width) width = oldWidth;
    }
    return ((width & 3) << 1) | (shouldJoin ? 1 : 0);
  }
}

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
const EMOJI_WIDE = /^\p{Emoji_Presentation}$/u;
/** East Asian Wide and Fullwidth ranges besides emoji (inclusive). */
const WIDE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f], [0x2329, 0x232a], [0x2e80, 0x303e], [0x3041, 0x33ff], [0x3400, 0x4dbf],
  [0x4e00, 0xa4cf], [0xa960, 0xa97f], [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f], [0xff00, 0xff60], [0xffe0, 0xffe6], [0x16fe0, 0x16fe4], [0x17000, 0x18cff],
  [0x1b000, 0x1b2ff], [0x1f200, 0x1f2ff], [0x20000, 0x2fffd], [0x30000, 0x3fffd],
];

function computeWidth(cp: number): 0 | 1 | 2 {
  if (cp < 0xa0) return cp >= 0x7f ? 0 : 1;
  if ((cp >= 0x1160 && cp <= 0x11ff) || cp === 0x200b) return 0;
  const ch = String.fromCodePoint(cp);
  if (cp !== 0xad && ZERO_WIDTH.test(ch)) return 0;
  for (const [lo, hi] of WIDE_RANGES) if (cp >= lo && cp <= hi) return 2;
  return EMOJI_WIDE.test(ch) ? 2 : 1;
}
