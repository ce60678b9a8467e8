import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import request, { type Response } from 'supertest';
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

/** Where a suite's requests go: an app of startTestApp, or the base address of a server process (server-process.ts). */
export type ApiTarget = TestApp | string;

/** What supertest is given for `target`, and its platform admin token (a server process has the bootstrap token). */
export function reach(target: ApiTarget): { to: Server | string; adminToken: string } {
  return typeof target === 'string'
    ? { to: target, adminToken: BOOTSTRAP_TOKEN }
    : { to: target.http, adminToken: target.adminToken };
}

/** Throws with the answer unless it has `status`: a setup step that went wrong says what it got. */
export function ensure(res: Response, status: number, what: string): Response {
  if (res.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res;
}

export interface CreatedTenant {
  id: string;
  slug: string;
  name: string;
  created_at: string;
}

/** POST /api/v1/tenants with `token`: the admin token, or one a test means to see refused. */
export function postTenant(to: Server | string, token: string, body: object) {
  return request(to).post('/api/v1/tenants').set('Authorization', `Bearer ${token}`).send(body);
}

/** POST /api/v1/tokens with `token`: the admin token, or one a test means to see refused or limited. */
export function postToken(to: Server | string, token: string, body: object) {
  return request(to).post('/api/v1/tokens').set('Authorization', `Bearer ${token}`).send(body);
}

/** A fresh tenant (`slug`, else a unique one), made by the admin token. */
export async function createTenant(target: ApiTarget, slug = uniqueSlug()): Promise<CreatedTenant> {
  const { to, adminToken } = reach(target);
  const res = await postTenant(to, adminToken, { slug, name: `Tenant ${slug}` });
  return ensure(res, 201, `create tenant ${slug}`).body.data as CreatedTenant;
}

export interface IssuedToken {
  id: string;
  tenant_id: string;
  token: string;
  scopes: string[];
}

/** A token of the tenant (id or slug) with these scopes, issued by the admin token. */
export async function issueToken(
  target: ApiTarget,
  tenant: string,
  scopes: string[],
  name = 'test token',
): Promise<IssuedToken> {
  const { to, adminToken } = reach(target);
  const res = await postToken(to, adminToken, { tenant, name, scopes });
  return ensure(res, 201, `issue a token of ${tenant}`).body.data as IssuedToken;
}

export interface TenantWithToken {
  tenantId: string;
  slug: string;
  token: string;
  tokenId: string;
}

/** A fresh tenant (`slug`, else a unique one) and a token of it with the given scopes, made through the admin API. */
export async function createTenantWithToken(
  target: ApiTarget,
  scopes: string[] = ['admin'],
  slug = uniqueSlug(),
): Promise<TenantWithToken> {
  const tenant = await createTenant(target, slug);
  const token = await issueToken(target, slug, scopes);
  return { tenantId: tenant.id, slug, token: token.token, tokenId: token.id };
}

/**
 * The app of the describe block that calls it: before its tests, `start()`, or startTestApp with the env `start`
 * (none by default), then `ready` with the app (the suite's tenants and fixtures, or its own variables assigned);
 * after them, the app closed.
 */
export function appSuite(
  ready: (t: TestApp) => unknown,
  start: Record<string, string> | (() => Promise<TestApp>) = {},
): void {
  let t: TestApp | undefined;
  beforeAll(async () => {
    t = await (typeof start === 'function' ? start() : startTestApp(start));
    await ready(t);
  });
  afterAll(async () => {
    await t?.close();
  });
}

/** What tenantSuite starts: the app and a fresh tenant with a token of the suite's scopes. */
export interface TenantSuite {
  t: TestApp;
  tenant: TenantWithToken;
}

/** appSuite with a fresh tenant whose token holds `scopes`, both handed to `ready`. */
export function tenantSuite(
  scopes: string[],
  ready: (suite: TenantSuite) => unknown,
  start?: Record<string, string> | (() => Promise<TestApp>),
): void {
  appSuite(async (t) => ready({ t, tenant: await createTenantWithToken(t, scopes) }), start);
}
