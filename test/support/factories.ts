import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { TestApp } from './test-app';
import { uniqueSlug } from './test-app';

export function bearer(token: string): Record<string, string> {
  return { Authorization: `Bearer ${token}` };
}

/**
 * A client address no other test (nor an earlier run sharing the same Redis) has used: a random IPv6 address in the
 * documentation range, for apps started with TRUST_PROXY and reached through X-Forwarded-For.
 */
export function randomClientIp(): string {
  const groups = Array.from({ length: 6 }, () =>
    randomBytes(2)
      .toString('hex')
      .replace(/^0+(?=.)/, ''),
  );
  return `2001:db8:${groups.join(':')}`;
}

/** A token secret nobody issued. */
export function unknownTokenSecret(): string {
  return `isk_${randomBytes(32).toString('base64url')}`;
}

export interface CreatedTenant {
  id: string;
  slug: string;
  name: string;
  created_at: string;
}

/** A fresh tenant, made by the admin token. */
export async function createTenant(t: TestApp): Promise<CreatedTenant> {
  const slug = uniqueSlug();
  const res = await request(t.http)
    .post('/api/v1/tenants')
    .set(bearer(t.adminToken))
    .send({ slug, name: `Tenant ${slug}` })
    .expect(201);
  return res.body.data as CreatedTenant;
}

export interface IssuedToken {
  id: string;
  tenant_id: string;
  token: string;
  scopes: string[];
}

/** A token of the tenant (id or slug) with these scopes, issued by the admin token. */
export async function issueToken(
  t: TestApp,
  tenant: string,
  scopes: string[],
  name = 'test token',
): Promise<IssuedToken> {
  const res = await request(t.http)
    .post('/api/v1/tokens')
    .set(bearer(t.adminToken))
    .send({ tenant, name, scopes })
    .expect(201);
  return res.body.data as IssuedToken;
}
