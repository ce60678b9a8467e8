import { createHash } from 'node:crypto';
import request from 'supertest';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer, randomClientIp } from '../support/factories';
import {
  uniqueSlug,
  type TestApp,
  createTenant,
  issueToken,
  type CreatedTenant,
  type IssuedToken,
  postToken,
  postTenant,
  appSuite,
} from '../support/test-app';
import { itRequiresAuthentication } from '../support/shared-cases';

const TENANT_ID = /^ten_[0-9A-HJKMNP-TV-Z]{26}$/;
const TOKEN_ID = /^tok_[0-9A-HJKMNP-TV-Z]{26}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Every page of a list, walked through next_cursor. */
async function walkPages(t: TestApp, path: string, token: string, headers: Record<string, string> = {}) {
  const pages: Array<{ ids: string[]; has_more: boolean }> = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const url: string = cursor ? `${path}${separator}starting_after=${encodeURIComponent(cursor)}` : path;
    const res = await request(t.http).get(url).set(bearer(token)).set(headers);
    expectList(res);
    pages.push({
      ids: res.body.data.map((row: { id: string }) => row.id),
      has_more: res.body.meta.pagination.has_more,
    });
    cursor = res.body.meta.pagination.next_cursor;
    expect(pages.length).toBeLessThan(100);
  } while (cursor);
  return pages;
}

describe('Tenants, tokens and authentication', () => {
  let t: TestApp;
  // Failed authentications count against the caller's address; a private one keeps them from blocking other suites.
  const clientIp = randomClientIp();

  appSuite((app) => (t = app), { TRUST_PROXY: '1' });

  describe('POST and GET /api/v1/tenants', () => {
    it('should require authentication', async () => {
      expectError(await request(t.http).get('/api/v1/tenants'), 401, 'authentication_required');
      expectError(
        await request(t.http).post('/api/v1/tenants').send({ slug: uniqueSlug(), name: 'x' }),
        401,
        'authentication_required',
      );
    });

    it('should create a tenant with a ten_ id, its slug and name, and keep it', async () => {
      const slug = uniqueSlug();
      const res = await postTenant(t.http, t.adminToken, { slug, name: 'Acme Fiber' });
      expectSuccess(res, 201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(TENANT_ID),
        slug,
        name: 'Acme Fiber',
        created_at: expect.stringMatching(ISO_MS),
      });
      const rows = await t.dataSource.query('SELECT slug, name FROM tenants WHERE id = $1', [
        res.body.data.id,
      ]);
      expect(rows).toEqual([{ slug, name: 'Acme Fiber' }]);
    });

    it('should refuse a second tenant with the same slug with 409 duplicate_tenant', async () => {
      const tenant = await createTenant(t);
      const res = await postTenant(t.http, t.adminToken, { slug: tenant.slug, name: 'Copycat' });
      expectError(res, 409, 'duplicate_tenant', 'slug');
      const rows = await t.dataSource.query('SELECT name FROM tenants WHERE slug = $1', [tenant.slug]);
      expect(rows).toEqual([{ name: tenant.name }]);
    });

    it('should list tenants in pages that join up to the one big page', async () => {
      // Bounded on both sides: on a shared Postgres, suites on a test clock make tenants dated in later years.
      const since = new Date(Date.now() - 1).toISOString();
      const until = new Date(Date.now() + 3_600_000).toISOString();
      const created = [await createTenant(t), await createTenant(t), await createTenant(t)];
      const path = `/api/v1/tenants?created_gte=${encodeURIComponent(since)}&created_lt=${encodeURIComponent(until)}`;

      const whole = await request(t.http).get(`${path}&limit=100`).set(bearer(t.adminToken));
      expectList(whole);
      const wholeIds: string[] = whole.body.data.map((row: { id: string }) => row.id);
      expect(wholeIds).toEqual(expect.arrayContaining(created.map((tenant) => tenant.id)));

      const pages = await walkPages(t, `${path}&limit=2`, t.adminToken);
      expect(pages[0].ids).toHaveLength(2);
      expect(pages[0].has_more).toBe(true);
      expect(pages[pages.length - 1].has_more).toBe(false);
      expect(pages.flatMap((page) => page.ids)).toEqual(wholeIds);
    });

    it('should refuse a token without the admin scope', async () => {
      const tenant = await createTenant(t);
      const issued = await issueToken(t, tenant.id, ['subscribers:*', 'billing:*', 'events:read']);
      expectError(
        await request(t.http).get('/api/v1/tenants').set(bearer(issued.token)),
        403,
        'insufficient_scope',
      );
      expectError(
        await postTenant(t.http, issued.token, { slug: uniqueSlug(), name: 'Not allowed' }),
        403,
        'insufficient_scope',
      );
    });
  });

  describe('POST /api/v1/tokens', () => {
    let tenant: CreatedTenant;
    beforeAll(async () => {
      tenant = await createTenant(t);
    });

    itRequiresAuthentication(
      () => t,
      'post',
      '/api/v1/tokens',
      () => ({
        tenant: tenant.slug,
        name: 'x',
        scopes: ['events:read'],
      }),
    );

    it('should return the secret once, starting isk_, with the token record', async () => {
      const res = await postToken(t.http, t.adminToken, {
        tenant: tenant.slug,
        name: 'billing sync',
        scopes: ['billing:read', 'events:read'],
      });
      expectSuccess(res, 201);
      const secret: string = res.body.data.token;
      expect(secret).toMatch(/^isk_[A-Za-z0-9_-]{32,}$/);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(TOKEN_ID),
        tenant_id: tenant.id,
        name: 'billing sync',
        prefix: secret.slice(0, 8),
        last4: secret.slice(-4),
        scopes: ['billing:read', 'events:read'],
        expires_at: null,
        revoked_at: null,
        last_used_at: null,
        created_at: expect.stringMatching(ISO_MS),
        token: secret,
      });
    });

    it('should issue a token that authenticates for its tenant', async () => {
      const issued = await issueToken(t, tenant.slug, ['events:read']);
      const res = await request(t.http).get('/api/v1/me').set(bearer(issued.token));
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        token_id: issued.id,
        tenant_id: tenant.id,
        tenant_slug: tenant.slug,
        token_tenant_id: tenant.id,
        scopes: ['events:read'],
      });
    });

    it('should accept a future expires_at and report it', async () => {
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const res = await postToken(t.http, t.adminToken, {
        tenant: tenant.id,
        name: 'short lived',
        scopes: ['events:read'],
        expires_at: expiresAt,
      });
      expectSuccess(res, 201);
      expect(res.body.data.expires_at).toBe(expiresAt);
      await request(t.http).get('/api/v1/me').set(bearer(res.body.data.token)).expect(200);
    });

    it('should issue the token for the tenant the request acts for when no tenant is named', async () => {
      const res = await request(t.http)
        .post('/api/v1/tokens')
        .set(bearer(t.adminToken))
        .set('X-Tenant-ID', tenant.slug)
        .send({ name: 'acting tenant', scopes: ['events:read'] });
      expectSuccess(res, 201);
      expect(res.body.data.tenant_id).toBe(tenant.id);
    });

    it('should store only the SHA-256 of the secret, never the secret itself', async () => {
      const issued = await issueToken(t, tenant.id, ['events:read']);
      const rows: Array<Record<string, unknown>> = await t.dataSource.query(
        'SELECT * FROM api_tokens WHERE id = $1',
        [issued.id],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].token_hash).toBe(sha256Hex(issued.token));
      for (const value of Object.values(rows[0])) {
        expect(JSON.stringify(value) ?? '').not.toContain(issued.token);
      }
    });

    it.each([
      ['an unknown scope', { scopes: ['events:read', 'root'] }, 'scopes'],
      ['no scopes', { scopes: [] }, 'scopes'],
      ['scopes that are not a list', { scopes: 'admin' }, 'scopes'],
      ['an expires_at in the past', { expires_at: '2020-01-01T00:00:00.000Z' }, 'expires_at'],
      ['an expires_at that is not a date', { expires_at: 'next week' }, 'expires_at'],
      ['an empty name', { name: '' }, 'name'],
    ])('should answer 422 validation_failed for %s', async (_label, override, field) => {
      const res = await postToken(t.http, t.adminToken, {
        tenant: tenant.id,
        name: 'bad token',
        scopes: ['events:read'],
        ...override,
      });
      expectError(res, 422, 'validation_failed', field);
    });

    it.each([['name'], ['scopes']])('should answer 400 missing_field when %s is absent', async (field) => {
      const body: Record<string, unknown> = {
        tenant: tenant.id,
        name: 'incomplete',
        scopes: ['events:read'],
      };
      delete body[field];
      const res = await postToken(t.http, t.adminToken, body);
      expectError(res, 400, 'missing_field', field);
    });

    it('should answer 422 invalid_reference for a tenant that does not exist', async () => {
      const res = await postToken(t.http, t.adminToken, {
        tenant: uniqueSlug('missing'),
        name: 'orphan',
        scopes: ['events:read'],
      });
      expectError(res, 422, 'invalid_reference', 'tenant');
    });

    it('should not store a token that was refused', async () => {
      const name = `refused ${uniqueSlug()}`;
      await postToken(t.http, t.adminToken, { tenant: tenant.id, name, scopes: ['root'] }).expect(422);
      const rows = await t.dataSource.query('SELECT id FROM api_tokens WHERE name = $1', [name]);
      expect(rows).toEqual([]);
    });

    it('should refuse a token without the admin scope', async () => {
      const issued = await issueToken(t, tenant.id, ['events:read', 'webhooks:*']);
      const res = await postToken(t.http, issued.token, { name: 'escalation', scopes: ['admin'] });
      expectError(res, 403, 'insufficient_scope');
    });
  });

  describe('GET and DELETE /api/v1/tokens', () => {
    let tenantA: CreatedTenant;
    let tenantB: CreatedTenant;
    let adminA: IssuedToken;
    let adminB: IssuedToken;
    let readerA: IssuedToken;
    let readerB: IssuedToken;

    beforeAll(async () => {
      tenantA = await createTenant(t);
      tenantB = await createTenant(t);
      adminA = await issueToken(t, tenantA.id, ['admin']);
      adminB = await issueToken(t, tenantB.id, ['admin']);
      readerA = await issueToken(t, tenantA.id, ['events:read']);
      readerB = await issueToken(t, tenantB.id, ['events:read']);
    });

    it('should require authentication', async () => {
      expectError(await request(t.http).get('/api/v1/tokens'), 401, 'authentication_required');
      expectError(
        await request(t.http).delete(`/api/v1/tokens/${readerA.id}`),
        401,
        'authentication_required',
      );
    });

    it('should list the tokens of the tenant without their secrets', async () => {
      const res = await request(t.http).get('/api/v1/tokens').set(bearer(adminA.token));
      expectList(res);
      expect(res.body.data.map((row: { id: string }) => row.id).sort()).toEqual(
        [adminA.id, readerA.id].sort(),
      );
      for (const row of res.body.data) {
        expect(row).not.toHaveProperty('token');
        expect(row).not.toHaveProperty('token_hash');
        expect(row.tenant_id).toBe(tenantA.id);
      }
      const text = JSON.stringify(res.body);
      expect(text).not.toContain(adminA.token);
      expect(text).not.toContain(readerA.token);
      expect(text).not.toContain(sha256Hex(readerA.token));
    });

    it('should record when a token was last used', async () => {
      const own = await createTenant(t);
      const fresh = await issueToken(t, own.id, ['events:read']);
      const lastUsedAt = async (): Promise<string | null> => {
        const res = await request(t.http)
          .get('/api/v1/tokens')
          .set(bearer(t.adminToken))
          .set('X-Tenant-ID', own.id);
        const rows = res.body.data as Array<{ id: string; last_used_at: string | null }>;
        const row = rows.find((candidate) => candidate.id === fresh.id);
        expect(row).toBeDefined();
        return row?.last_used_at ?? null;
      };
      expect(await lastUsedAt()).toBeNull();
      await request(t.http).get('/api/v1/me').set(bearer(fresh.token)).expect(200);
      expect(await lastUsedAt()).toMatch(ISO_MS);
    });

    it("should not show one tenant's tokens to another tenant", async () => {
      const res = await request(t.http).get('/api/v1/tokens?limit=100').set(bearer(adminB.token));
      expectList(res);
      const ids: string[] = res.body.data.map((row: { id: string }) => row.id);
      expect(ids.sort()).toEqual([adminB.id, readerB.id].sort());
      expect(ids).not.toContain(adminA.id);
      expect(ids).not.toContain(readerA.id);
    });

    it("should answer 404 not_found when revoking another tenant's token, and leave it working", async () => {
      const res = await request(t.http).delete(`/api/v1/tokens/${readerB.id}`).set(bearer(adminA.token));
      expectError(res, 404, 'not_found');
      await request(t.http).get('/api/v1/me').set(bearer(readerB.token)).expect(200);
      const rows = await t.dataSource.query('SELECT revoked_at FROM api_tokens WHERE id = $1', [readerB.id]);
      expect(rows).toEqual([{ revoked_at: null }]);
    });

    it('should answer 404 not_found when revoking a token id that does not exist', async () => {
      const res = await request(t.http)
        .delete('/api/v1/tokens/tok_01ARZ3NDEKTSV4RRFFQ69G5FAV')
        .set(bearer(adminA.token));
      expectError(res, 404, 'not_found');
    });

    it('should revoke a token so that it answers 401 invalid_token from then on', async () => {
      const victim = await issueToken(t, tenantA.id, ['events:read']);
      await request(t.http).get('/api/v1/me').set(bearer(victim.token)).expect(200);

      const res = await request(t.http).delete(`/api/v1/tokens/${victim.id}`).set(bearer(adminA.token));
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ id: victim.id, revoked_at: expect.stringMatching(ISO_MS) });
      expect(res.body.data).not.toHaveProperty('token');

      const after = await request(t.http)
        .get('/api/v1/me')
        .set('X-Forwarded-For', clientIp)
        .set(bearer(victim.token));
      expectError(after, 401, 'invalid_token');
      const rows = await t.dataSource.query('SELECT revoked_at FROM api_tokens WHERE id = $1', [victim.id]);
      expect(rows[0].revoked_at).toBeInstanceOf(Date);
    });

    it('should answer the same revoked record when a token is revoked twice', async () => {
      const victim = await issueToken(t, tenantA.id, ['events:read']);
      const first = await request(t.http).delete(`/api/v1/tokens/${victim.id}`).set(bearer(adminA.token));
      const second = await request(t.http).delete(`/api/v1/tokens/${victim.id}`).set(bearer(adminA.token));
      expectSuccess(first);
      expectSuccess(second);
      expect(second.body.data.revoked_at).toBe(first.body.data.revoked_at);
    });

    it('should let the platform:admin token manage the tokens of the tenant named in X-Tenant-ID', async () => {
      const res = await request(t.http)
        .get('/api/v1/tokens')
        .set(bearer(t.adminToken))
        .set('X-Tenant-ID', tenantB.slug);
      expectList(res);
      expect(res.body.data.map((row: { id: string }) => row.id).sort()).toEqual(
        [adminB.id, readerB.id].sort(),
      );
    });
  });

  describe('GET /api/v1/me and X-Tenant-ID', () => {
    let tenant: CreatedTenant;
    beforeAll(async () => {
      tenant = await createTenant(t);
    });

    itRequiresAuthentication(() => t, 'get', '/api/v1/me');

    it('should answer the token id, its tenant and its scopes', async () => {
      const issued = await issueToken(t, tenant.id, ['subscribers:*', 'events:read']);
      const res = await request(t.http).get('/api/v1/me').set(bearer(issued.token));
      expectSuccess(res);
      expect(res.body.data).toEqual({
        token_id: issued.id,
        tenant_id: tenant.id,
        tenant_slug: tenant.slug,
        token_tenant_id: tenant.id,
        scopes: ['subscribers:*', 'events:read'],
      });
    });

    it.each([['slug'], ['id']])(
      'should let the platform:admin token act for the tenant named by its %s in X-Tenant-ID',
      async (key) => {
        const own = await request(t.http).get('/api/v1/me').set(bearer(t.adminToken));
        const header = key === 'slug' ? tenant.slug : tenant.id;
        const res = await request(t.http)
          .get('/api/v1/me')
          .set(bearer(t.adminToken))
          .set('X-Tenant-ID', header);
        expectSuccess(res);
        expect(res.body.data).toMatchObject({
          tenant_id: tenant.id,
          tenant_slug: tenant.slug,
          token_tenant_id: own.body.data.tenant_id,
        });
        expect(own.body.data.tenant_id).not.toBe(tenant.id);
      },
    );

    it("should act for the token's own tenant when X-Tenant-ID is absent", async () => {
      const res = await request(t.http).get('/api/v1/me').set(bearer(t.adminToken));
      expectSuccess(res);
      expect(res.body.data.tenant_slug).toBe('default');
      expect(res.body.data.tenant_id).toBe(res.body.data.token_tenant_id);
    });

    it('should refuse a non-admin token naming another tenant with 403 tenant_forbidden', async () => {
      const other = await createTenant(t);
      const issued = await issueToken(t, tenant.id, ['events:read']);
      const res = await request(t.http)
        .get('/api/v1/me')
        .set(bearer(issued.token))
        .set('X-Tenant-ID', other.id);
      expectError(res, 403, 'tenant_forbidden');
    });
  });

  describe('scopes', () => {
    let tenant: CreatedTenant;
    beforeAll(async () => {
      tenant = await createTenant(t);
    });

    itRequiresAuthentication(() => t, 'get', '/api/v1/events');

    it.each([[['subscribers:*']], [['subscribers:read']], [['admin']]])(
      'should let a token with %j read subscribers',
      async (scopes) => {
        const issued = await issueToken(t, tenant.id, scopes);
        expectList(await request(t.http).get('/api/v1/subscribers').set(bearer(issued.token)));
      },
    );

    it.each([[['subscribers:write']], [['billing:*', 'events:read']]])(
      'should refuse a token with %j to read subscribers with 403 insufficient_scope',
      async (scopes) => {
        const issued = await issueToken(t, tenant.id, scopes);
        const res = await request(t.http).get('/api/v1/subscribers').set(bearer(issued.token));
        expectError(res, 403, 'insufficient_scope');
      },
    );

    it.each([[['events:read']], [['admin']], [['subscribers:read', 'events:read']]])(
      'should let a token with %j read events',
      async (scopes) => {
        const issued = await issueToken(t, tenant.id, scopes);
        expectList(await request(t.http).get('/api/v1/events').set(bearer(issued.token)));
      },
    );

    it.each([[['subscribers:*']], [['subscribers:read', 'billing:*', 'webhooks:*']]])(
      'should refuse a token with %j to read events with 403 insufficient_scope',
      async (scopes) => {
        const issued = await issueToken(t, tenant.id, scopes);
        const res = await request(t.http).get('/api/v1/events').set(bearer(issued.token));
        expectError(res, 403, 'insufficient_scope');
        expect(res.body.error.message).toContain('events:read');
      },
    );
  });
});
