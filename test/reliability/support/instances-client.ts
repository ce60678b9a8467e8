/**
 * Small HTTP and SQL helpers for the several-instances spec: every request goes to a running instance by its base
 * address (`request(url)`), every SQL read to the shared database with a plain `pg` client.
 */
import request from 'supertest';
import { bearer } from '../../support/factories';
import { createTenantWithToken } from '../../support/test-app';
import { recordSecrets } from './log-capture';

export type Body = Record<string, unknown>;

export interface Tenant {
  id: string;
  slug: string;
  token: string;
}

/** Tenant `slug` and a token of it with `scopes`, through the bootstrap token on `url`; the raw token is recorded. */
export async function createTenant(url: string, slug: string, scopes: string[] = ['admin']): Promise<Tenant> {
  const made = await createTenantWithToken(url, scopes, slug);
  recordSecrets(made.token);
  return { id: made.tenantId, slug, token: made.token };
}

export function post(
  url: string,
  token: string,
  path: string,
  body: Body,
  headers: Record<string, string> = {},
) {
  return request(url).post(path).set(bearer(token)).set(headers).send(body);
}
