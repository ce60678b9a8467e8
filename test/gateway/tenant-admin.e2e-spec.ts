import request from 'supertest';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { runCli as cli } from '../support/server-process';
import { subscriberBody } from '../support/subscriber-factory';
import {
  startTestApp,
  uniqueSlug,
  type TestApp,
  createTenant,
  issueToken,
  type CreatedTenant,
  type IssuedToken,
  postToken,
  postTenant,
} from '../support/test-app';

describe('Two roles: a tenant admin and platform:admin', () => {
  let t: TestApp;
  let tenantA: CreatedTenant;
  let tenantB: CreatedTenant;
  let adminA: IssuedToken;
  let adminB: IssuedToken;
  let readerB: IssuedToken;
  let defaultTenantId: string;

  beforeAll(async () => {
    t = await startTestApp();
    tenantA = await createTenant(t);
    tenantB = await createTenant(t);
    adminA = await issueToken(t, tenantA.id, ['admin']);
    adminB = await issueToken(t, tenantB.id, ['admin']);
    readerB = await issueToken(t, tenantB.id, ['subscribers:read']);
    const me = await request(t.http).get('/api/v1/me').set(bearer(t.adminToken)).expect(200);
    defaultTenantId = me.body.data.token_tenant_id;
  });
  afterAll(async () => {
    await t.close();
  });

  async function tokenRow(id: string): Promise<{ scopes: string[]; revoked_at: Date | null } | undefined> {
    const rows: Array<{ scopes: string[]; revoked_at: Date | null }> = await t.dataSource.query(
      'SELECT scopes, revoked_at FROM api_tokens WHERE id = $1',
      [id],
    );
    return rows[0];
  }

  describe('a tenant admin naming another tenant in X-Tenant-ID', () => {
    const others = (): Array<[string, string]> => [
      ['id', tenantB.id],
      ['slug', tenantB.slug],
      ['slug of tenant default', 'default'],
    ];

    it('should answer 403 tenant_forbidden on reads, by id and by slug', async () => {
      for (const [, header] of others()) {
        for (const path of ['/api/v1/subscribers', '/api/v1/events', '/api/v1/tokens', '/api/v1/me']) {
          const res = await request(t.http).get(path).set(bearer(adminA.token)).set('X-Tenant-ID', header);
          expectError(res, 403, 'tenant_forbidden');
        }
      }
    });

    it('should answer 403 tenant_forbidden on writes and write nothing, by id and by slug', async () => {
      for (const [, header] of others()) {
        const body = subscriberBody();
        const res = await request(t.http)
          .post('/api/v1/subscribers')
          .set(bearer(adminA.token))
          .set('X-Tenant-ID', header)
          .send(body);
        expectError(res, 403, 'tenant_forbidden');
        const rows = await t.dataSource.query('SELECT id FROM subscribers WHERE external_id = $1', [
          body.external_id,
        ]);
        expect(rows).toEqual([]);
      }
    });

    it('should answer 403 tenant_forbidden when minting a token for another tenant through X-Tenant-ID', async () => {
      const name = `escalation ${uniqueSlug()}`;
      const res = await request(t.http)
        .post('/api/v1/tokens')
        .set(bearer(adminA.token))
        .set('X-Tenant-ID', 'default')
        .send({ name, scopes: ['admin'] });
      expectError(res, 403, 'tenant_forbidden');
      expect(await t.dataSource.query('SELECT id FROM api_tokens WHERE name = $1', [name])).toEqual([]);
    });

    it('should still act for its own tenant when X-Tenant-ID names it', async () => {
      const res = await request(t.http)
        .get('/api/v1/me')
        .set(bearer(adminA.token))
        .set('X-Tenant-ID', tenantA.slug);
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ tenant_id: tenantA.id, scopes: ['admin'] });
    });
  });

  describe('a tenant admin and the tenant endpoints', () => {
    it('should answer 403 insufficient_scope on POST /api/v1/tenants and create nothing', async () => {
      const slug = uniqueSlug();
      const res = await postTenant(t.http, adminA.token, { slug, name: 'Not allowed' });
      expectError(res, 403, 'insufficient_scope');
      expect(await t.dataSource.query('SELECT id FROM tenants WHERE slug = $1', [slug])).toEqual([]);
    });

    it('should answer 403 insufficient_scope on GET /api/v1/tenants', async () => {
      expectError(
        await request(t.http).get('/api/v1/tenants').set(bearer(adminA.token)),
        403,
        'insufficient_scope',
      );
    });
  });

  describe('a tenant admin issuing tokens', () => {
    it.each([[['platform:admin']], [['admin', 'platform:admin']]])(
      'should answer 403 insufficient_scope on scopes when granting %j, and store nothing',
      async (scopes) => {
        const name = `grant ${uniqueSlug()}`;
        const res = await postToken(t.http, adminA.token, { name, scopes });
        expectError(res, 403, 'insufficient_scope', 'scopes');
        expect(res.body.error.message).toContain('platform:admin');
        expect(await t.dataSource.query('SELECT id FROM api_tokens WHERE name = $1', [name])).toEqual([]);
      },
    );

    it.each([
      ['another tenant by id', () => tenantB.id],
      ['another tenant by slug', () => tenantB.slug],
      ['tenant default', () => 'default'],
      ['a tenant that does not exist', () => uniqueSlug('missing')],
    ])('should answer 403 tenant_forbidden when issuing a token for %s', async (_label, tenant) => {
      const name = `cross ${uniqueSlug()}`;
      const res = await postToken(t.http, adminA.token, {
        tenant: tenant(),
        name,
        scopes: ['subscribers:read'],
      });
      expectError(res, 403, 'tenant_forbidden', 'tenant');
      expect(await t.dataSource.query('SELECT id FROM api_tokens WHERE name = $1', [name])).toEqual([]);
    });

    it('should issue admin and narrower tokens of its own tenant, which work there', async () => {
      for (const scopes of [['admin'], ['subscribers:*', 'events:read']]) {
        const res = await postToken(t.http, adminA.token, { tenant: tenantA.slug, name: 'own', scopes });
        expectSuccess(res, 201);
        expect(res.body.data).toMatchObject({ tenant_id: tenantA.id, scopes });
        const created = await request(t.http)
          .post('/api/v1/subscribers')
          .set(bearer(res.body.data.token))
          .send(subscriberBody());
        expectSuccess(created, 201);
      }
    });

    it('should answer 403 insufficient_scope when a subscribers:read token grants subscribers:write', async () => {
      const reader = await issueToken(t, tenantA.id, ['subscribers:read']);
      const res = await postToken(t.http, reader.token, { name: 'wider', scopes: ['subscribers:write'] });
      expectError(res, 403, 'insufficient_scope');
    });
  });

  describe("a tenant admin and another tenant's tokens", () => {
    it('should list only the tokens of its own tenant', async () => {
      const res = await request(t.http).get('/api/v1/tokens?limit=100').set(bearer(adminB.token));
      expectList(res);
      for (const row of res.body.data) {
        expect(row.tenant_id).toBe(tenantB.id);
      }
      const ids = res.body.data.map((row: { id: string }) => row.id);
      expect(ids).toEqual(expect.arrayContaining([adminB.id, readerB.id]));
      expect(ids).not.toContain(adminA.id);
    });

    it("should answer 404 not_found revoking another tenant's token, which keeps working", async () => {
      const res = await request(t.http).delete(`/api/v1/tokens/${readerB.id}`).set(bearer(adminA.token));
      expectError(res, 404, 'not_found');
      await request(t.http).get('/api/v1/me').set(bearer(readerB.token)).expect(200);
      expect((await tokenRow(readerB.id))?.revoked_at).toBeNull();
    });

    it('should answer 403 tenant_forbidden revoking through X-Tenant-ID of another tenant', async () => {
      const res = await request(t.http)
        .delete(`/api/v1/tokens/${readerB.id}`)
        .set(bearer(adminA.token))
        .set('X-Tenant-ID', tenantB.slug);
      expectError(res, 403, 'tenant_forbidden');
      expect((await tokenRow(readerB.id))?.revoked_at).toBeNull();
    });

    it('should revoke a token of its own tenant', async () => {
      const victim = await issueToken(t, tenantA.id, ['events:read']);
      const res = await request(t.http).delete(`/api/v1/tokens/${victim.id}`).set(bearer(adminA.token));
      expectSuccess(res);
      expectError(await request(t.http).get('/api/v1/me').set(bearer(victim.token)), 401, 'invalid_token');
    });

    it('should answer 403 insufficient_scope revoking a platform:admin token of its own tenant', async () => {
      const platform = await issueToken(t, tenantA.id, ['platform:admin']);
      const res = await request(t.http).delete(`/api/v1/tokens/${platform.id}`).set(bearer(adminA.token));
      expectError(res, 403, 'insufficient_scope');
      await request(t.http).get('/api/v1/tenants').set(bearer(platform.token)).expect(200);
    });
  });

  describe('platform:admin', () => {
    it('should be what the bootstrap token holds', async () => {
      const res = await request(t.http).get('/api/v1/me').set(bearer(t.adminToken));
      expectSuccess(res);
      expect(res.body.data.scopes).toContain('platform:admin');
    });

    it('should create, list and act for any tenant, by id and by slug', async () => {
      const tenant = await createTenant(t);
      const list = await request(t.http).get('/api/v1/tenants?limit=100').set(bearer(t.adminToken));
      expectList(list);
      for (const header of [tenant.id, tenant.slug]) {
        const created = await request(t.http)
          .post('/api/v1/subscribers')
          .set(bearer(t.adminToken))
          .set('X-Tenant-ID', header)
          .send(subscriberBody());
        expectSuccess(created, 201);
        const rows = await t.dataSource.query('SELECT tenant_id FROM subscribers WHERE id = $1', [
          created.body.data.id,
        ]);
        expect(rows).toEqual([{ tenant_id: tenant.id }]);
      }
      const tokens = await request(t.http)
        .get('/api/v1/tokens')
        .set(bearer(t.adminToken))
        .set('X-Tenant-ID', tenantB.slug);
      expectList(tokens);
      for (const row of tokens.body.data) {
        expect(row.tenant_id).toBe(tenantB.id);
      }
    });

    it("should issue and revoke another tenant's tokens, platform:admin included", async () => {
      const res = await postToken(t.http, t.adminToken, {
        tenant: tenantB.slug,
        name: 'platform operator',
        scopes: ['platform:admin'],
      });
      expectSuccess(res, 201);
      const issued = res.body.data as { id: string; token: string };
      const acting = await request(t.http)
        .get('/api/v1/me')
        .set(bearer(issued.token))
        .set('X-Tenant-ID', defaultTenantId);
      expectSuccess(acting);
      expect(acting.body.data.tenant_id).toBe(defaultTenantId);
      const child = await postToken(t.http, issued.token, {
        tenant: tenantA.id,
        name: 'child',
        scopes: ['platform:admin'],
      });
      expectSuccess(child, 201);

      const revoked = await request(t.http)
        .delete(`/api/v1/tokens/${issued.id}`)
        .set(bearer(t.adminToken))
        .set('X-Tenant-ID', tenantB.id);
      expectSuccess(revoked);
      expectError(await request(t.http).get('/api/v1/me').set(bearer(issued.token)), 401, 'invalid_token');
    });

    it('should be granted by the CLI, which may grant any scope', async () => {
      const slug = uniqueSlug('cli');
      expect(await cli(['tenant', 'create', slug])).toMatchObject({ code: 0 });
      const issued = await cli(['token', 'create', '--tenant', slug, '--scopes', 'platform:admin']);
      expect(issued).toMatchObject({ code: 0, stderr: '' });
      const secret = issued.stdout.trimEnd().split('\n').pop() ?? '';
      await request(t.http).get('/api/v1/tenants').set(bearer(secret)).expect(200);
      const acting = await request(t.http)
        .get('/api/v1/me')
        .set(bearer(secret))
        .set('X-Tenant-ID', tenantA.slug);
      expectSuccess(acting);
      expect(acting.body.data.scopes).toEqual(['platform:admin']);
    });
  });

  describe('an API_BOOTSTRAP_TOKEN registered by an earlier version', () => {
    it('should be upgraded to platform:admin at boot, once', async () => {
      // What an earlier version registered: an ['admin'] token of tenant default with the operator's value.
      const legacy = await issueToken(t, 'default', ['admin'], 'bootstrap (API_BOOTSTRAP_TOKEN)');
      expectError(
        await request(t.http).get('/api/v1/tenants').set(bearer(legacy.token)),
        403,
        'insufficient_scope',
      );

      for (let boot = 0; boot < 2; boot++) {
        const upgraded = await startTestApp({ API_BOOTSTRAP_TOKEN: legacy.token });
        try {
          expect((await tokenRow(legacy.id))?.scopes).toEqual(['platform:admin']);
          await request(upgraded.http).get('/api/v1/tenants').set(bearer(legacy.token)).expect(200);
          const acting = await request(upgraded.http)
            .get('/api/v1/me')
            .set(bearer(legacy.token))
            .set('X-Tenant-ID', tenantB.slug);
          expectSuccess(acting);
          expect(acting.body.data.token_id).toBe(legacy.id);
        } finally {
          await upgraded.close();
        }
      }
      const copies = await t.dataSource.query(
        'SELECT id FROM api_tokens WHERE token_hash = (SELECT token_hash FROM api_tokens WHERE id = $1)',
        [legacy.id],
      );
      expect(copies).toEqual([{ id: legacy.id }]);
    });
  });
});
