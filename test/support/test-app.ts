import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';

export const BOOTSTRAP_TOKEN = 'isk_test_bootstrap_token_0123456789abcdef';

export interface TestApp {
  app: INestApplication;
  http: Server;
  dataSource: DataSource;
  /** The platform:admin token of tenant `default` (API_BOOTSTRAP_TOKEN): manages tenants, acts for any. */
  adminToken: string;
  close(): Promise<void>;
}

/** Boots the whole application in-process on the test database (see global-setup), quiet and with roomy limits. */
export async function startTestApp(
  env: Record<string, string> = {},
  options: Parameters<typeof createApp>[1] = {},
): Promise<TestApp> {
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '1000000',
    // Suites share 127.0.0.1 (and, with REDIS_URL, its counters across runs): only the abuse suite lowers this.
    ABUSE_AUTH_FAILURES_MAX: '1000000',
    API_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
    ...env,
  });
  const running = await createApp(config, options);
  return {
    app: running.app,
    http: running.app.getHttpServer() as Server,
    dataSource: running.app.get(DataSource),
    adminToken: config.bootstrapToken ?? BOOTSTRAP_TOKEN,
    close: () => running.close(),
  };
}

export function uniqueSlug(prefix = 't'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

export interface TenantWithToken {
  tenantId: string;
  slug: string;
  token: string;
  tokenId: string;
}

/** A fresh tenant and a token of it with the given scopes, made through the admin API. */
export async function createTenantWithToken(
  t: TestApp,
  scopes: string[] = ['admin'],
): Promise<TenantWithToken> {
  const slug = uniqueSlug();
  const tenant = await request(t.http)
    .post('/api/v1/tenants')
    .set('Authorization', `Bearer ${t.adminToken}`)
    .send({ slug, name: `Tenant ${slug}` })
    .expect(201);
  const token = await request(t.http)
    .post('/api/v1/tokens')
    .set('Authorization', `Bearer ${t.adminToken}`)
    .send({ tenant: slug, name: 'test token', scopes })
    .expect(201);
  return { tenantId: tenant.body.data.id, slug, token: token.body.data.token, tokenId: token.body.data.id };
}
