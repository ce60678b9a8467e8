/**
 * Scopes a token can hold. `<domain>:*` grants read and write of that domain. Two roles, never one: `admin` manages its
 * own tenant (its tokens and data) and implies every data scope there; `platform:admin` manages tenants, may act for
 * any tenant, and implies `admin`.
 */
export const SCOPES = [
  'platform:admin',
  'admin',
  'subscribers:read',
  'subscribers:write',
  'subscribers:*',
  'billing:read',
  'billing:write',
  'billing:*',
  'tickets:read',
  'tickets:write',
  'tickets:*',
  'provisioning:read',
  'provisioning:write',
  'provisioning:*',
  'webhooks:read',
  'webhooks:write',
  'webhooks:*',
  'events:read',
  'automation:read',
  'automation:write',
  'automation:*',
  'notifications:read',
  'notifications:write',
  'notifications:*',
] as const;
export type Scope = (typeof SCOPES)[number];

export const PLATFORM_ADMIN: Scope = 'platform:admin';

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Whether scopes `granted` hold `required`, directly or by implication. */
export function hasScope(granted: readonly string[], required: Scope): boolean {
  if (granted.includes(PLATFORM_ADMIN) || granted.includes(required)) {
    return true;
  }
  if (required === PLATFORM_ADMIN) {
    return false;
  }
  if (granted.includes('admin')) {
    return true;
  }
  const [domain] = required.split(':');
  return granted.includes(`${domain}:*`);
}

/** The scopes of `requested` that `granted` does not hold: a token may only grant (or revoke) what it holds. */
export function scopesNotHeld(granted: readonly string[], requested: readonly string[]): string[] {
  return requested.filter((scope) => !hasScope(granted, scope as Scope));
}
