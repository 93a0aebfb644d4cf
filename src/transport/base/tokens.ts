import * as crypto from 'node:crypto';

/** Compares secrets in constant time (length differences leak nothing useful: both are hashed). */
export function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

/** A new random token (256 bits). */
export function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}
