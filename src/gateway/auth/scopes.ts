/** Scopes a token can hold. `<domain>:*` grants read and write of that domain; `admin` grants everything. */
export const SCOPES = [
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
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export function hasScope(granted: readonly string[], required: Scope): boolean {
  if (granted.includes('admin') || granted.includes(required)) return true;
  const [domain] = required.split(':');
  return granted.includes(`${domain}:*`);
}
