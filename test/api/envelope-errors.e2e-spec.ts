import request from 'supertest';
import { expectError, expectList, expectSuccess, isGeneratedRequestId } from '../support/envelope';
import { bearer, randomClientIp, unknownTokenSecret } from '../support/factories';
import {
  startTestApp,
  uniqueSlug,
  type TestApp,
  createTenant,
  issueToken,
  type CreatedTenant,
  postToken,
  postTenant,
} from '../support/test-app';
import { letTimePass } from '../support/wait-for';
import { itRequiresAuthentication, itAnswersInvalidJson } from '../support/shared-cases';

describe('Envelope and errors', () => {
  let t: TestApp;
  // Failed authentications count against the caller's address; a private one keeps them from blocking other suites.
  const clientIp = randomClientIp();
  let tenant: CreatedTenant;
  let otherTenant: CreatedTenant;

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1' });
    tenant = await createTenant(t);
    otherTenant = await createTenant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('success envelope', () => {
    itRequiresAuthentication(() => t, 'get', '/api/v1/tenants');

    it('should wrap a record in success, data and meta with the request id and api version', async () => {
      const res = await request(t.http).get('/api/v1/me').set(bearer(t.adminToken));
      expectSuccess(res);
      expect(res.body.data.scopes).toEqual(['platform:admin']);
    });

    it('should wrap a list with meta.pagination holding limit, has_more and next_cursor', async () => {
      const res = await request(t.http).get('/api/v1/tenants?limit=1').set(bearer(t.adminToken));
      expectList(res);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.meta.pagination).toEqual({
        limit: 1,
        has_more: true,
        next_cursor: expect.any(String),
      });
    });

    it('should default the page size to 20', async () => {
      const res = await request(t.http).get('/api/v1/tenants').set(bearer(t.adminToken));
      expectList(res);
      expect(res.body.meta.pagination.limit).toBe(20);
    });

    it('should answer 201 in the envelope when a record is created', async () => {
      const slug = uniqueSlug();
      const res = await postTenant(t.http, t.adminToken, { slug, name: 'Created in the envelope' });
      expectSuccess(res, 201);
      expect(res.body.data).toMatchObject({ slug, name: 'Created in the envelope' });
    });
  });

  describe('malformed requests (400)', () => {
    itRequiresAuthentication(() => t, 'post', '/api/v1/tenants', { slug: uniqueSlug(), name: 'x' });

    itAnswersInvalidJson(
      () => t,
      () => t.adminToken,
      'post',
      '/api/v1/tenants',
      {
        'a body that does not parse': '{"slug": "half-a-body",',
        'a JSON array body': JSON.stringify([{ slug: uniqueSlug(), name: 'In an array' }]),
        'a JSON string body': JSON.stringify('just a string'),
      },
    );

    it('should answer missing_field naming the absent field', async () => {
      const res = await postTenant(t.http, t.adminToken, { name: 'No slug' });
      expectError(res, 400, 'missing_field', 'slug');
    });

    it('should answer missing_field for a required field sent as null', async () => {
      const res = await postTenant(t.http, t.adminToken, { slug: uniqueSlug(), name: null });
      expectError(res, 400, 'missing_field', 'name');
    });

    it('should answer unknown_field naming the field the endpoint does not accept', async () => {
      const res = await postTenant(t.http, t.adminToken, {
        slug: uniqueSlug(),
        name: 'Extra',
        colour: 'red',
      });
      expectError(res, 400, 'unknown_field', 'colour');
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['colour=red', 'colour'],
      ['created_gte=yesterday', 'created_gte'],
    ])('should answer invalid_query for ?%s', async (query, field) => {
      const res = await request(t.http).get(`/api/v1/tenants?${query}`).set(bearer(t.adminToken));
      expectError(res, 400, 'invalid_query', field);
    });

    it.each([
      ['garbage', 'garbage'],
      ['a cursor of the wrong shape', Buffer.from(JSON.stringify({ id: 'ten_x' })).toString('base64url')],
      [
        'a cursor with a bad date',
        Buffer.from(JSON.stringify(['not-a-date', 'ten_x'])).toString('base64url'),
      ],
    ])('should answer invalid_cursor for %s', async (_label, cursor) => {
      const res = await request(t.http)
        .get(`/api/v1/tenants?starting_after=${encodeURIComponent(cursor)}`)
        .set(bearer(t.adminToken));
      expectError(res, 400, 'invalid_cursor', 'starting_after');
    });
  });

  describe('authentication (401)', () => {
    it('should require authentication', async () => {
      const res = await request(t.http).get('/api/v1/me');
      expectError(res, 401, 'authentication_required');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('should answer authentication_required for an Authorization header that is not a bearer token', async () => {
      const res = await request(t.http).get('/api/v1/me').set('Authorization', 'Basic dXNlcjpwYXNz');
      expectError(res, 401, 'authentication_required');
    });

    it('should answer invalid_token for a token nobody issued', async () => {
      const res = await request(t.http)
        .get('/api/v1/me')
        .set('X-Forwarded-For', clientIp)
        .set(bearer(unknownTokenSecret()));
      expectError(res, 401, 'invalid_token');
      expect(res.headers['www-authenticate']).toContain('invalid_token');
    });

    it('should answer invalid_token for a revoked token', async () => {
      const issued = await issueToken(t, tenant.id, ['events:read']);
      await request(t.http)
        .delete(`/api/v1/tokens/${issued.id}`)
        .set(bearer(t.adminToken))
        .set('X-Tenant-ID', tenant.id)
        .expect(200);
      const res = await request(t.http)
        .get('/api/v1/me')
        .set('X-Forwarded-For', clientIp)
        .set(bearer(issued.token));
      expectError(res, 401, 'invalid_token');
    });

    it('should answer invalid_token for an expired token, even one used (and cached) before it expired', async () => {
      const expiresAt = new Date(Date.now() + 1500).toISOString();
      const issued = (
        await postToken(t.http, t.adminToken, {
          tenant: tenant.id,
          name: 'short-lived',
          scopes: ['events:read'],
          expires_at: expiresAt,
        }).expect(201)
      ).body.data as { token: string };
      await request(t.http).get('/api/v1/me').set(bearer(issued.token)).expect(200);
      // Real time has to cross expires_at (the server reads its own clock): a deliberate wait, 1.6 s at most.
      await letTimePass(Date.parse(expiresAt) - Date.now() + 100);
      const res = await request(t.http)
        .get('/api/v1/me')
        .set('X-Forwarded-For', clientIp)
        .set(bearer(issued.token));
      expectError(res, 401, 'invalid_token');
    });
  });

  describe('permissions (403)', () => {
    itRequiresAuthentication(() => t, 'get', '/api/v1/events');

    it('should answer insufficient_scope when a token without admin lists tenants', async () => {
      const issued = await issueToken(t, tenant.id, ['events:read', 'subscribers:*']);
      const res = await request(t.http).get('/api/v1/tenants').set(bearer(issued.token));
      expectError(res, 403, 'insufficient_scope');
    });

    it('should answer insufficient_scope when a subscribers:read token lists events', async () => {
      const issued = await issueToken(t, tenant.id, ['subscribers:read']);
      const res = await request(t.http).get('/api/v1/events').set(bearer(issued.token));
      expectError(res, 403, 'insufficient_scope');
    });

    it('should answer tenant_forbidden when a non-admin token names another tenant', async () => {
      const issued = await issueToken(t, tenant.id, ['events:read']);
      const res = await request(t.http)
        .get('/api/v1/events')
        .set(bearer(issued.token))
        .set('X-Tenant-ID', otherTenant.id);
      expectError(res, 403, 'tenant_forbidden');
    });

    it('should answer tenant_forbidden when a non-admin token names another tenant by slug', async () => {
      const issued = await issueToken(t, tenant.id, ['events:read']);
      const res = await request(t.http)
        .get('/api/v1/events')
        .set(bearer(issued.token))
        .set('X-Tenant-ID', otherTenant.slug);
      expectError(res, 403, 'tenant_forbidden');
    });

    it('should answer tenant_forbidden when a non-admin token names a tenant that does not exist', async () => {
      const issued = await issueToken(t, tenant.id, ['events:read']);
      const res = await request(t.http)
        .get('/api/v1/events')
        .set(bearer(issued.token))
        .set('X-Tenant-ID', uniqueSlug('missing'));
      expectError(res, 403, 'tenant_forbidden');
    });

    it('should answer tenant_forbidden when an admin token names a tenant that does not exist', async () => {
      const res = await request(t.http)
        .get('/api/v1/me')
        .set(bearer(t.adminToken))
        .set('X-Tenant-ID', 'ten_01ARZ3NDEKTSV4RRFFQ69G5FAV');
      expectError(res, 403, 'tenant_forbidden');
    });

    it('should let a non-admin token name its own tenant', async () => {
      const issued = await issueToken(t, tenant.id, ['events:read']);
      const res = await request(t.http)
        .get('/api/v1/events')
        .set(bearer(issued.token))
        .set('X-Tenant-ID', tenant.slug);
      expectList(res);
    });
  });

  describe('not found (404)', () => {
    itRequiresAuthentication(() => t, 'get', '/api/v1/events/evt_unknown');

    it('should answer route_not_found for a path no endpoint serves', async () => {
      const res = await request(t.http).get('/api/v1/no-such-thing').set(bearer(t.adminToken));
      expectError(res, 404, 'route_not_found');
    });

    it('should answer route_not_found for a path outside the API', async () => {
      const res = await request(t.http).get('/favicon.ico');
      expectError(res, 404, 'route_not_found');
    });

    it('should answer method_not_allowed, with Allow, for a method the path does not serve', async () => {
      const res = await request(t.http).put('/api/v1/tenants').set(bearer(t.adminToken)).send({});
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD, POST');
    });

    it('should answer not_found for an event id that does not exist', async () => {
      const res = await request(t.http).get('/api/v1/events/evt_unknown').set(bearer(t.adminToken));
      expectError(res, 404, 'not_found');
    });
  });

  describe('body size and type (413, 415)', () => {
    itRequiresAuthentication(() => t, 'post', '/api/v1/tokens', { name: 'x', scopes: ['admin'] });

    it('should answer payload_too_large for a body over 1 MiB', async () => {
      const res = await postTenant(t.http, t.adminToken, {
        slug: uniqueSlug(),
        name: 'x'.repeat(1024 * 1024 + 1),
      });
      expectError(res, 413, 'payload_too_large');
    });

    it('should read a body under 1 MiB and judge its fields', async () => {
      const res = await postTenant(t.http, t.adminToken, {
        slug: uniqueSlug(),
        name: 'x'.repeat(1000 * 1000),
      });
      expectError(res, 422, 'validation_failed', 'name');
    });

    it('should answer unsupported_media_type for a text/plain body', async () => {
      const res = await request(t.http)
        .post('/api/v1/tenants')
        .set(bearer(t.adminToken))
        .set('Content-Type', 'text/plain')
        .send('slug=plain-text');
      expectError(res, 415, 'unsupported_media_type');
    });

    it('should answer unsupported_media_type for a form-encoded body', async () => {
      const res = await request(t.http)
        .post('/api/v1/tenants')
        .set(bearer(t.adminToken))
        .type('form')
        .send({ slug: uniqueSlug(), name: 'Form' });
      expectError(res, 415, 'unsupported_media_type');
    });
  });

  describe('conflicts and validation (409, 422)', () => {
    itRequiresAuthentication(() => t, 'post', '/api/v1/tenants', { slug: 'A!', name: 'x' });

    it('should answer validation_failed naming the field whose value is wrong', async () => {
      const res = await postTenant(t.http, t.adminToken, { slug: 'A!', name: 'Bad slug' });
      expectError(res, 422, 'validation_failed', 'slug');
    });

    it('should answer validation_failed for a field of the wrong type', async () => {
      const res = await postTenant(t.http, t.adminToken, { slug: uniqueSlug(), name: 42 });
      expectError(res, 422, 'validation_failed', 'name');
    });

    it('should answer duplicate_tenant for a slug already taken', async () => {
      const res = await postTenant(t.http, t.adminToken, { slug: tenant.slug, name: 'Same slug again' });
      expectError(res, 409, 'duplicate_tenant', 'slug');
    });
  });

  describe('request ids', () => {
    it('should require authentication', async () => {
      const res = await request(t.http).get('/api/v1/me').set('X-Request-ID', 'trace-unauthenticated-1');
      expectError(res, 401, 'authentication_required');
      expect(res.body.meta.request_id).toBe('trace-unauthenticated-1');
    });

    it('should echo a sane X-Request-ID in the header and in meta.request_id', async () => {
      const requestId = 'client-trace_01.abc:9';
      const res = await request(t.http)
        .get('/api/v1/me')
        .set(bearer(t.adminToken))
        .set('X-Request-ID', requestId);
      expectSuccess(res);
      expect(res.headers['x-request-id']).toBe(requestId);
      expect(res.body.meta.request_id).toBe(requestId);
    });

    it('should keep an X-Request-ID of exactly 128 characters', async () => {
      const requestId = 'r'.repeat(128);
      const res = await request(t.http).get('/api/v1').set('X-Request-ID', requestId);
      expectSuccess(res);
      expect(res.body.meta.request_id).toBe(requestId);
    });

    it.each([
      ['longer than 128 characters', 'r'.repeat(129)],
      ['holding spaces', 'my trace id'],
      ['holding quotes', '"quoted"'],
      ['holding angle brackets', '<script>'],
    ])('should replace an X-Request-ID %s with a generated req_ id', async (_label, requestId) => {
      const res = await request(t.http).get('/api/v1').set('X-Request-ID', requestId);
      expectSuccess(res);
      expect(res.body.meta.request_id).not.toBe(requestId);
      expect(isGeneratedRequestId(res.body.meta.request_id)).toBe(true);
    });

    it('should generate a req_ id when none is sent, a new one per request', async () => {
      const first = await request(t.http).get('/api/v1');
      const second = await request(t.http).get('/api/v1');
      expectSuccess(first);
      expectSuccess(second);
      expect(isGeneratedRequestId(first.body.meta.request_id)).toBe(true);
      expect(isGeneratedRequestId(second.body.meta.request_id)).toBe(true);
      expect(first.body.meta.request_id).not.toBe(second.body.meta.request_id);
    });

    it('should echo the request id on a route_not_found answer', async () => {
      const res = await request(t.http).get('/api/v1/no-such-thing').set('X-Request-ID', 'trace-404');
      expectError(res, 404, 'route_not_found');
      expect(res.body.meta.request_id).toBe('trace-404');
    });

    it('should echo the request id on an invalid_json answer', async () => {
      const res = await request(t.http)
        .post('/api/v1/tenants')
        .set(bearer(t.adminToken))
        .set('X-Request-ID', 'trace-bad-json')
        .set('Content-Type', 'application/json')
        .send('{nope');
      expectError(res, 400, 'invalid_json');
      expect(res.body.meta.request_id).toBe('trace-bad-json');
    });

    it('should generate a req_ id on an error answer when the sent one is not sane', async () => {
      const res = await request(t.http).get('/api/v1/no-such-thing').set('X-Request-ID', 'a b');
      expectError(res, 404, 'route_not_found');
      expect(isGeneratedRequestId(res.body.meta.request_id)).toBe(true);
    });
  });
});
