import { createHash, randomBytes } from 'node:crypto';
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
