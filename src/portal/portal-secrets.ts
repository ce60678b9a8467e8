import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { PORTAL_TOKEN_PREFIX } from '../common/auth/portal';

/** What an invite code starts with: it is a bearer secret too, told apart from a session token by its prefix. */
export const INVITE_PREFIX = 'ipi_';

export function newSessionSecret(): string {
  return PORTAL_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function newInviteCode(): string {
  return INVITE_PREFIX + randomBytes(24).toString('base64url');
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** How many digits a sign-in code has, and how many wrong tries kill it. */
export const SIGN_IN_CODE_DIGITS = 6;
export const SIGN_IN_CODE_MAX_TRIES = 5;

/** Six digits, uniformly from the CSPRNG (crypto.randomInt), leading zeros kept: "004217". */
export function newSignInCode(): string {
  return String(randomInt(0, 10 ** SIGN_IN_CODE_DIGITS)).padStart(SIGN_IN_CODE_DIGITS, '0');
}

/**
 * The stored hash of a sign-in code: salted with its row's id, so two rows with one code do not share a hash and a
 * table of a million hashes serves one row only (docs/decisions.md).
 */
export function hashSignInCode(id: string, code: string): string {
  return hashSecret(`${id}:${code}`);
}

/** Whether `code` is the one `codeHash` was made from, compared in constant time. */
export function signInCodeMatches(id: string, code: string, codeHash: string | null): boolean {
  if (codeHash === null || !/^\d{6}$/.test(code)) {
    return false;
  }
  const given = Buffer.from(hashSignInCode(id, code), 'hex');
  const stored = Buffer.from(codeHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/** An email as a subscriber's is compared (lower case, src/subscribers), trimmed: the key of the per-email limit. */
export function normalizePortalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The link an invite opens: PORTAL_URL with ?invite=<code> (or &invite= when it has a query); null without one. */
export function inviteLink(base: string | null, code: string): string | null {
  return base ? `${base}${base.includes('?') ? '&' : '?'}invite=${encodeURIComponent(code)}` : null;
}
