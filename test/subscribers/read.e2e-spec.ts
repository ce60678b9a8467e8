import request from 'supertest';
import { expectError, expectList, expectSuccess, listedIds, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createSubscriber,
  createSubscriberInState,
  type CreatedSubscriber,
  fullSubscriberBody,
  ISO_MS,
  listen,
  listSubscriberIds,
  SUBSCRIBER_KEYS,
  SUBSCRIBER_SCOPES,
  type SubscriberRecord,
  uniqueEmail,
} from '../support/subscriber-factory';
import {
  createTenantWithToken,
  startTestApp,
  type TenantWithToken,
  type TestApp,
  issueToken,
} from '../support/test-app';
import { letTimePass } from '../support/wait-for';
import { itRequiresAuthentication } from '../support/shared-cases';

interface Page {
  ids: string[];
  has_more: boolean;
  next_cursor: string | null;
}

describe('Subscribers: list and get', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  async function page(token: string, query: Record<string, string>): Promise<Page> {
    const res = await request(t.http).get('/api/v1/subscribers').query(query).set(bearer(token));
    expectList(res);
    const { has_more, next_cursor } = res.body.meta.pagination;
    return { ids: (res.body.data as SubscriberRecord[]).map((row) => row.id), has_more, next_cursor };
  }

  beforeAll(async () => {
    t = await startTestApp();
    await listen(t);
    tenant = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /api/v1/subscribers', () => {
    /** A tenant of its own, so the filters see only these subscribers. */
    let lister: TenantWithToken;
    const email = uniqueEmail();
    let prospect: CreatedSubscriber;
    let active: CreatedSubscriber;
    let suspended: CreatedSubscriber;

    beforeAll(async () => {
      lister = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      prospect = await createSubscriber(t, lister.token, { status: 'prospect', email });
      // 5 ms apart, so that their created_at differ and newest-first is the order they were made in.
      await letTimePass(5);
      active = await createSubscriber(t, lister.token, { status: 'active' });
      await letTimePass(5);
      suspended = await createSubscriber(t, lister.token, { status: 'suspended' });
    });

    itRequiresAuthentication(() => t, 'get', '/api/v1/subscribers');

    it('should list the full records of the tenant, newest first', async () => {
      const res = await request(t.http).get('/api/v1/subscribers').set(bearer(lister.token));
      expect(listedIds(res)).toEqual([suspended.id, active.id, prospect.id]);
      for (const row of res.body.data) {
        expect(Object.keys(row).sort()).toEqual(SUBSCRIBER_KEYS);
      }
      expect(res.body.meta.pagination).toEqual({ limit: 20, has_more: false, next_cursor: null });
    });

    it('should filter by status', async () => {
      expect(await listSubscriberIds(t, lister.token, 'status=active')).toEqual([active.id]);
      expect(await listSubscriberIds(t, lister.token, 'status=cancelled')).toEqual([]);
    });

    it('should filter by external_id', async () => {
      expect(await listSubscriberIds(t, lister.token, `external_id=${active.external_id}`)).toEqual([
        active.id,
      ]);
      expect(await listSubscriberIds(t, lister.token, 'external_id=crm-nobody')).toEqual([]);
    });

    it('should filter by email case-insensitively', async () => {
      const query = `email=${encodeURIComponent(email.toUpperCase())}`;
      expect(await listSubscriberIds(t, lister.token, query)).toEqual([prospect.id]);
    });

    it('should filter by created_gte and created_lt', async () => {
      const times = [prospect, active, suspended].map((row) => row.created_at);
      expect(new Set(times).size).toBe(3);
      const [first, second, third] = times.map(encodeURIComponent);
      expect(await listSubscriberIds(t, lister.token, `created_gte=${second}`)).toEqual([
        suspended.id,
        active.id,
      ]);
      expect(await listSubscriberIds(t, lister.token, `created_lt=${second}`)).toEqual([prospect.id]);
      const range = `created_gte=${first}&created_lt=${third}`;
      expect(await listSubscriberIds(t, lister.token, range)).toEqual([active.id, prospect.id]);
    });

    it('should not list the subscribers of another tenant', async () => {
      const ids = await listSubscriberIds(t, tenant.token);
      for (const row of [prospect, active, suspended]) {
        expect(ids).not.toContain(row.id);
      }
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['status=bogus', 'status'],
      ['created_gte=yesterday', 'created_gte'],
      ['colour=red', 'colour'],
    ])('should answer invalid_query for ?%s', async (query, field) => {
      const res = await request(t.http).get(`/api/v1/subscribers?${query}`).set(bearer(lister.token));
      expectError(res, 400, 'invalid_query', field);
    });

    it.each([
      ['garbage', 'garbage'],
      ['a cursor of the wrong shape', Buffer.from(JSON.stringify({ id: 'sub_x' })).toString('base64url')],
      [
        'a cursor with a bad date',
        Buffer.from(JSON.stringify(['not-a-date', 'sub_x'])).toString('base64url'),
      ],
    ])('should answer invalid_cursor for %s', async (_label, cursor) => {
      const res = await request(t.http)
        .get('/api/v1/subscribers')
        .query({ starting_after: cursor })
        .set(bearer(lister.token));
      expectError(res, 400, 'invalid_cursor', 'starting_after');
    });

    it('should answer 403 insufficient_scope for a token without subscribers:read', async () => {
      const billing = await issueToken(t, lister.tenantId, ['billing:*', 'events:read']);
      expectError(
        await request(t.http).get('/api/v1/subscribers').set(bearer(billing.token)),
        403,
        'insufficient_scope',
      );
    });
  });

  describe('GET /api/v1/subscribers: pagination while rows are inserted', () => {
    itRequiresAuthentication(() => t, 'get', '/api/v1/subscribers?limit=3');

    it('should return every subscriber that existed at the start exactly once, newest first', async () => {
      const walker = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      const existing: string[] = [];
      for (let i = 0; i < 10; i++) {
        existing.push((await createSubscriber(t, walker.token)).id);
      }
      const newestFirst = [...existing].reverse();

      const pages: Page[] = [];
      const inserted: string[] = [];
      let cursor: string | null = null;
      do {
        const query: Record<string, string> = { limit: '3', ...(cursor ? { starting_after: cursor } : {}) };
        // One insert races the fetch, another lands between this fetch and the next.
        const [current, racing] = await Promise.all([
          page(walker.token, query),
          createSubscriber(t, walker.token),
        ]);
        inserted.push(racing.id, (await createSubscriber(t, walker.token)).id);
        pages.push(current);
        cursor = current.next_cursor;
        expect(pages.length).toBeLessThan(20);
      } while (cursor);

      // Only the insert racing the first fetch may be seen, on the first page; every later one is newer than the cursor.
      const walked = pages.flatMap((p) => p.ids);
      expect(walked.filter((id) => id !== inserted[0])).toEqual(newestFirst);
      expect(pages.slice(1).flatMap((p) => p.ids)).not.toContain(inserted[0]);
      expect(pages.slice(0, -1).every((p) => p.ids.length === 3 && p.has_more && p.next_cursor)).toBe(true);
      expect(pages[pages.length - 1]).toMatchObject({ has_more: false, next_cursor: null });
      expect(await listSubscriberIds(t, walker.token)).toEqual([...inserted].reverse().concat(newestFirst));
    });

    it('should answer has_more and next_cursor on an exact last page', async () => {
      const exact = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        ids.push((await createSubscriber(t, exact.token)).id);
      }
      const first = await page(exact.token, { limit: '2' });
      expect(first).toMatchObject({ ids: [ids[3], ids[2]], has_more: true });
      const second = await page(exact.token, { limit: '2', starting_after: first.next_cursor as string });
      expect(second).toEqual({ ids: [ids[1], ids[0]], has_more: false, next_cursor: null });
    });
  });

  describe('GET /api/v1/subscribers/{id}', () => {
    it('should require authentication', async () => {
      const created = await createSubscriber(t, tenant.token);
      expectError(
        await request(t.http).get(`/api/v1/subscribers/${created.id}`),
        401,
        'authentication_required',
      );
    });

    it('should return the full record, contact fields included', async () => {
      const body = fullSubscriberBody({ status: 'active' });
      const created = await createSubscriber(t, tenant.token, body);
      const res = await request(t.http).get(`/api/v1/subscribers/${created.id}`).set(bearer(tenant.token));
      expect(successRecord(res, SUBSCRIBER_KEYS)).toEqual({
        ...created,
        email: body.email,
        phone: body.phone,
        address: body.address,
        metadata: body.metadata,
        suspension_reason: null,
        tax_exempt: false,
        tax_exempt_reason: null,
        tax_id: null,
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(res.body.data.updated_at).toBe(created.created_at);
    });

    it('should answer null and {} for the optional fields that were never set', async () => {
      const created = await createSubscriber(t, tenant.token, { external_id: undefined });
      const res = await request(t.http).get(`/api/v1/subscribers/${created.id}`).set(bearer(tenant.token));
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        external_id: null,
        email: null,
        phone: null,
        address: null,
        billing_profile_id: null,
        metadata: {},
      });
    });

    it('should return an archived subscriber, which is read-only but still readable', async () => {
      const archived = await createSubscriberInState(t, tenant.token, 'archived');
      const res = await request(t.http).get(`/api/v1/subscribers/${archived.id}`).set(bearer(tenant.token));
      expectSuccess(res);
      expect(res.body.data.status).toBe('archived');
    });

    it('should answer not_found for the subscriber of another tenant', async () => {
      const created = await createSubscriber(t, tenant.token);
      const other = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      const res = await request(t.http).get(`/api/v1/subscribers/${created.id}`).set(bearer(other.token));
      expectError(res, 404, 'not_found');
    });

    it('should answer not_found for an id nobody issued', async () => {
      const res = await request(t.http)
        .get('/api/v1/subscribers/sub_01JD3Z6W3R4T5Y6V7W8X9Y0ZAB')
        .set(bearer(tenant.token));
      expectError(res, 404, 'not_found');
    });

    it('should answer 403 insufficient_scope for a token without subscribers:read', async () => {
      const created = await createSubscriber(t, tenant.token);
      const writer = await issueToken(t, tenant.tenantId, ['subscribers:write', 'billing:read']);
      const res = await request(t.http).get(`/api/v1/subscribers/${created.id}`).set(bearer(writer.token));
      expectError(res, 403, 'insufficient_scope');
    });
  });
});
