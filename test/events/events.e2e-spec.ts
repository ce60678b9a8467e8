import request from 'supertest';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  startTestApp,
  uniqueSlug,
  type TestApp,
  createTenant,
  issueToken,
  type CreatedTenant,
  type IssuedToken,
} from '../support/test-app';
import { itRequiresAuthentication } from '../support/shared-cases';

interface EventBody {
  id: string;
  type: string;
  subject_id: string | null;
  data: { object: Record<string, unknown> };
  request_id: string | null;
  actor: { type: string; id: string | null };
  created_at: string;
}

const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

describe('Events', () => {
  let t: TestApp;
  let adminTokenId: string;
  /** A tenant whose whole event log this suite wrote: its creation, three tokens, one revocation. */
  let tenant: CreatedTenant;
  const tenantRequestId = `trace-tenant-${uniqueSlug()}`;
  let reader: IssuedToken;
  let second: IssuedToken;
  let revoked: IssuedToken;
  const revokeRequestId = `trace-revoke-${uniqueSlug()}`;

  async function events(query = '', token = reader.token): Promise<EventBody[]> {
    const res = await request(t.http).get(`/api/v1/events${query}`).set(bearer(token));
    expectList(res);
    return res.body.data as EventBody[];
  }

  beforeAll(async () => {
    t = await startTestApp();
    const me = await request(t.http).get('/api/v1/me').set(bearer(t.adminToken)).expect(200);
    adminTokenId = me.body.data.token_id;

    const slug = uniqueSlug();
    const created = await request(t.http)
      .post('/api/v1/tenants')
      .set(bearer(t.adminToken))
      .set('X-Request-ID', tenantRequestId)
      .send({ slug, name: 'Event log tenant' })
      .expect(201);
    tenant = created.body.data;
    reader = await issueToken(t, tenant.id, ['events:read'], 'reader');
    second = await issueToken(t, tenant.id, ['subscribers:*'], 'second');
    revoked = await issueToken(t, tenant.id, ['billing:read'], 'to revoke');
    await request(t.http)
      .delete(`/api/v1/tokens/${revoked.id}`)
      .set(bearer(t.adminToken))
      .set('X-Tenant-ID', tenant.id)
      .set('X-Request-ID', revokeRequestId)
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /api/v1/events', () => {
    itRequiresAuthentication(() => t, 'get', '/api/v1/events');

    it('should list the whole log of the tenant, newest first', async () => {
      const log = await events('?limit=100');
      expect(log.map((event) => event.type).sort()).toEqual(
        ['tenant.created', 'token.created', 'token.created', 'token.created', 'token.revoked'].sort(),
      );
      const order = log.map((event) => [event.created_at, event.id].join(' '));
      expect(order).toEqual([...order].sort().reverse());
      for (const event of log) {
        expect(event.id).toMatch(EVENT_ID);
      }
    });

    it('should write tenant.created with the tenant, the acting token and the request id', async () => {
      const [event] = await events('?type=tenant.created');
      expect(event).toEqual({
        id: expect.stringMatching(EVENT_ID),
        type: 'tenant.created',
        subject_id: tenant.id,
        data: { object: tenant },
        request_id: tenantRequestId,
        actor: { type: 'token', id: adminTokenId },
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
    });

    it('should write token.created for each token, without its secret', async () => {
      const log = await events('?type=token.created');
      expect(log.map((event) => event.subject_id).sort()).toEqual([reader.id, second.id, revoked.id].sort());
      const readerEvent = log.find((event) => event.subject_id === reader.id);
      expect(readerEvent?.data.object).toMatchObject({
        id: reader.id,
        tenant_id: tenant.id,
        name: 'reader',
        scopes: ['events:read'],
      });
      expect(readerEvent?.data.object).not.toHaveProperty('token');
      const text = JSON.stringify(log);
      for (const issued of [reader, second, revoked]) {
        expect(text).not.toContain(issued.token);
      }
    });

    it('should write token.revoked with the revoked record', async () => {
      const log = await events('?type=token.revoked');
      expect(log).toHaveLength(1);
      expect(log[0]).toMatchObject({
        subject_id: revoked.id,
        request_id: revokeRequestId,
        actor: { type: 'token', id: adminTokenId },
        data: { object: { id: revoked.id, revoked_at: expect.any(String) } },
      });
    });

    it('should filter by a type prefix ending in .*', async () => {
      const log = await events('?type=token.*');
      expect(log.map((event) => event.type).sort()).toEqual([
        'token.created',
        'token.created',
        'token.created',
        'token.revoked',
      ]);
    });

    it('should find nothing for a type no event has', async () => {
      expect(await events('?type=subscriber.created')).toEqual([]);
      expect(await events('?type=tokens.*')).toEqual([]);
    });

    it('should read an underscore in a type prefix as an underscore, not as any character', async () => {
      expect(await events('?type=t_ken.*')).toEqual([]);
      expect(await events('?type=token_created')).toEqual([]);
    });

    it('should filter by subject_id', async () => {
      const log = await events(`?subject_id=${revoked.id}`);
      expect(log.map((event) => event.type).sort()).toEqual(['token.created', 'token.revoked']);
      for (const event of log) {
        expect(event.subject_id).toBe(revoked.id);
      }
    });

    it('should filter by created_gte (inclusive) and created_lt (exclusive)', async () => {
      const log = await events('?limit=100');
      const pivot = log[Math.floor(log.length / 2)].created_at;
      const atOrAfter = log.filter((event) => event.created_at >= pivot).map((event) => event.id);
      const before = log.filter((event) => event.created_at < pivot).map((event) => event.id);

      const gte = await events(`?limit=100&created_gte=${encodeURIComponent(pivot)}`);
      const lt = await events(`?limit=100&created_lt=${encodeURIComponent(pivot)}`);
      expect(gte.map((event) => event.id)).toEqual(atOrAfter);
      expect(lt.map((event) => event.id)).toEqual(before);
      expect(gte.length + lt.length).toBe(log.length);
    });

    it('should answer 400 invalid_query for a malformed type filter', async () => {
      const res = await request(t.http).get('/api/v1/events?type=Token!').set(bearer(reader.token));
      expectError(res, 400, 'invalid_query', 'type');
    });

    it('should walk the log one event per page with no gap and no overlap', async () => {
      const whole = (await events('?limit=100')).map((event) => event.id);
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `?limit=1&starting_after=${encodeURIComponent(cursor)}` : '?limit=1';
        const res = await request(t.http).get(`/api/v1/events${query}`).set(bearer(reader.token));
        expectList(res);
        expect(res.body.data).toHaveLength(1);
        walked.push(res.body.data[0].id);
        const { has_more, next_cursor } = res.body.meta.pagination;
        expect(has_more).toBe(walked.length < whole.length);
        cursor = next_cursor;
        expect(walked.length).toBeLessThanOrEqual(whole.length);
      } while (cursor);
      expect(walked).toEqual(whole);
    });

    it('should keep the filters while paging', async () => {
      const first = await request(t.http)
        .get('/api/v1/events?type=token.*&limit=3')
        .set(bearer(reader.token));
      expectList(first);
      expect(first.body.meta.pagination.has_more).toBe(true);
      const rest = await request(t.http)
        .get(
          `/api/v1/events?type=token.*&limit=3&starting_after=${encodeURIComponent(first.body.meta.pagination.next_cursor)}`,
        )
        .set(bearer(reader.token));
      expectList(rest);
      expect(rest.body.meta.pagination).toEqual({ limit: 3, has_more: false, next_cursor: null });
      const types = [...first.body.data, ...rest.body.data].map((event: EventBody) => event.type);
      expect(types).toHaveLength(4);
      expect(types).not.toContain('tenant.created');
    });
  });

  describe('GET /api/v1/events/:id', () => {
    it('should require authentication', async () => {
      const [event] = await events('?limit=1');
      expectError(await request(t.http).get(`/api/v1/events/${event.id}`), 401, 'authentication_required');
    });

    it('should answer one event as the list shows it', async () => {
      const [listed] = await events('?type=token.revoked');
      const res = await request(t.http).get(`/api/v1/events/${listed.id}`).set(bearer(reader.token));
      expectSuccess(res);
      expect(res.body.data).toEqual(listed);
    });

    it('should answer 404 not_found for an id that does not exist', async () => {
      const res = await request(t.http).get('/api/v1/events/evt_unknown').set(bearer(reader.token));
      expectError(res, 404, 'not_found');
    });

    it('should refuse a token without events:read with 403 insufficient_scope', async () => {
      const [listed] = await events('?limit=1');
      const res = await request(t.http).get(`/api/v1/events/${listed.id}`).set(bearer(second.token));
      expectError(res, 403, 'insufficient_scope');
    });
  });

  describe('tenant isolation', () => {
    let otherReader: IssuedToken;
    let otherTenant: CreatedTenant;
    beforeAll(async () => {
      otherTenant = await createTenant(t);
      otherReader = await issueToken(t, otherTenant.id, ['events:read']);
    });

    itRequiresAuthentication(() => t, 'get', '/api/v1/events?limit=1');

    it("should not list one tenant's events to another", async () => {
      const mine = (await events('?limit=100')).map((event) => event.id);
      const theirs = await events('?limit=100', otherReader.token);
      expect(theirs.map((event) => event.subject_id).sort()).toEqual([otherReader.id, otherTenant.id].sort());
      for (const event of theirs) {
        expect(mine).not.toContain(event.id);
      }
    });

    it("should answer 404 not_found for another tenant's event id", async () => {
      const [event] = await events('?type=tenant.created');
      const res = await request(t.http).get(`/api/v1/events/${event.id}`).set(bearer(otherReader.token));
      expectError(res, 404, 'not_found');
    });

    it('should show a platform:admin token the events of the tenant named in X-Tenant-ID only', async () => {
      const [event] = await events('?type=tenant.created');
      const asOther = await request(t.http)
        .get(`/api/v1/events/${event.id}`)
        .set(bearer(t.adminToken))
        .set('X-Tenant-ID', otherTenant.slug);
      expectError(asOther, 404, 'not_found');
      const asOwner = await request(t.http)
        .get(`/api/v1/events/${event.id}`)
        .set(bearer(t.adminToken))
        .set('X-Tenant-ID', tenant.slug);
      expectSuccess(asOwner);
      expect(asOwner.body.data.id).toBe(event.id);
    });
  });
});
