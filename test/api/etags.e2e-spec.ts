import request from 'supertest';
import type { Response } from 'supertest';
import { runToCompletion } from '../support/billing-run-factory';
import { createInvoice, createPayment } from '../support/billing-factory';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { createPool } from '../support/ipam-factory';
import { createNas } from '../support/network-factory';
import { createPlan, createService } from '../support/provisioning-factory';
import { createBillingProfile, createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { createTicket } from '../support/ticket-factory';
import { createWebhook, deleteAllWebhooks } from '../support/webhook-receiver';

type Body = Record<string, unknown>;

/** A strong tag: a quoted opaque string, never W/. */
const STRONG_TAG = /^"[A-Za-z0-9_-]+"$/;
const STALE_TAG = '"stale-0000000000000000000000"';

/** One write on a record: the request, and what it changes (to prove a 412 changed nothing). */
interface Write {
  name: string;
  /** Makes a fresh record and answers its path (GET) and the write's method, path and body. */
  setup(): Promise<{ path: string; method: 'patch' | 'post' | 'delete'; writePath: string; body?: Body }>;
  /** The write answers the record itself (and so its new ETag). */
  answersRecord: boolean;
}

describe('Optimistic concurrency: ETag, If-None-Match and If-Match', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  const get = (path: string, headers: Record<string, string> = {}) =>
    request(t.http).get(path).set(bearer(tenant.token)).set(headers);

  function send(
    method: 'patch' | 'post' | 'delete',
    path: string,
    body: Body | undefined,
    headers: Record<string, string> = {},
  ) {
    const req = request(t.http)[method](path).set(bearer(tenant.token)).set(headers);
    return body === undefined ? req : req.send(body);
  }

  async function eventCountOf(subjectId: string): Promise<number> {
    const rows = await t.dataSource.query<{ n: string }[]>(
      'SELECT count(*) AS n FROM events WHERE tenant_id = $1 AND subject_id = $2',
      [tenant.tenantId, subjectId],
    );
    return Number(rows[0].n);
  }

  const idOf = (path: string) => path.split('/').pop()!;

  beforeAll(async () => {
    // Workers and the scheduler off: nothing but these requests changes a record between two reads.
    t = await startTestApp({
      PROVISIONING_WORKER_ENABLED: 'false',
      WEBHOOK_WORKER_ENABLED: 'false',
      BILLING_SCHEDULER_ENABLED: 'false',
      AUTOMATION_ENABLED: 'false',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    tenant = await createTenantWithToken(t, ['admin']);
  });
  afterAll(async () => {
    // Its webhooks (events: *) would keep a later suite's delivery worker busy with callbacks nobody answers.
    if (tenant) {
      await deleteAllWebhooks(t.http, tenant.token);
    }
    await t?.close();
  });

  const subscriberId = async () => (await createSubscriber(t, tenant.token)).id;

  /** Every kind of single record the API serves, made fresh: its path. */
  const singleRecords: [string, () => Promise<string>][] = [
    ['subscriber', async () => `/api/v1/subscribers/${await subscriberId()}`],
    [
      'billing profile',
      async () => `/api/v1/billing-profiles/${(await createBillingProfile(t, tenant.token)).id}`,
    ],
    [
      'invoice',
      async () => `/api/v1/invoices/${(await createInvoice(t, tenant.token, await subscriberId())).id}`,
    ],
    [
      'transaction',
      async () =>
        `/api/v1/transactions/${(await createPayment(t, tenant.token, await subscriberId(), 500)).id}`,
    ],
    ['ticket', async () => `/api/v1/tickets/${(await createTicket(t, tenant.token)).id}`],
    ['service plan', async () => `/api/v1/service-plans/${(await createPlan(t, tenant.token)).id}`],
    [
      'service',
      async () =>
        `/api/v1/services/${(await createService(t, tenant.token, await subscriberId())).service.id}`,
    ],
    [
      'provisioning order',
      async () =>
        `/api/v1/provisioning-orders/${(await createService(t, tenant.token, await subscriberId())).order.id}`,
    ],
    ['NAS', async () => `/api/v1/nas/${(await createNas(t, tenant.token)).id}`],
    ['IP pool', async () => `/api/v1/ip-pools/${(await createPool(t, tenant.token)).id}`],
    [
      'webhook',
      async () =>
        `/api/v1/webhooks/${(await createWebhook(t.http, tenant.token, { url: 'https://hooks.example.net/isp', events: ['*'] })).id}`,
    ],
    [
      'billing run',
      async () => `/api/v1/billing-runs/${(await runToCompletion(t, tenant.token, { dry_run: true })).id}`,
    ],
    [
      'event',
      async () => {
        const events = await get('/api/v1/events?limit=1');
        return `/api/v1/events/${events.body.data[0].id}`;
      },
    ],
  ];

  describe('GET of one record', () => {
    it('should require authentication', async () => {
      const res = await request(t.http).get(`/api/v1/subscribers/${await subscriberId()}`);
      expectError(res, 401, 'authentication_required');
      expect(res.headers.etag).toBeUndefined();
    });

    it.each(singleRecords)(
      'should answer a %s with a strong ETag that request_id does not change',
      async (_, make) => {
        const path = await make();
        const first = await get(path);
        const second = await get(path);
        expectSuccess(first);
        expectSuccess(second);
        expect(first.headers.etag).toMatch(STRONG_TAG);
        expect(first.body.meta.request_id).not.toBe(second.body.meta.request_id);
        expect(second.headers.etag).toBe(first.headers.etag);
      },
    );

    it.each(singleRecords)(
      'should answer a %s with 304 and no body when If-None-Match names its tag',
      async (_, make) => {
        const path = await make();
        const { etag } = (await get(path)).headers;
        for (const ifNoneMatch of [etag, `W/${etag}`, '*', `"other", ${etag}`, `W/"other", W/${etag}`]) {
          const res = await get(path, { 'If-None-Match': ifNoneMatch });
          expect([ifNoneMatch, res.status]).toEqual([ifNoneMatch, 304]);
          expect(res.text).toBe('');
          expect(res.headers.etag).toBe(etag);
        }
      },
    );

    it('should answer 200 with the body and the tag when If-None-Match names other tags', async () => {
      const path = await singleRecords[0][1]();
      const { etag } = (await get(path)).headers;
      for (const ifNoneMatch of [STALE_TAG, `W/${STALE_TAG}`, `"a", "b"`]) {
        const res = await get(path, { 'If-None-Match': ifNoneMatch });
        expectSuccess(res);
        expect(res.headers.etag).toBe(etag);
        expect(res.body.data.id).toBe(idOf(path));
      }
    });

    it('should never tag a list', async () => {
      await subscriberId();
      const res = await get('/api/v1/subscribers');
      expectList(res);
      expect(res.headers.etag).toBeUndefined();
    });
  });

  const writes: Write[] = [
    {
      name: 'PATCH /subscribers/{id}',
      answersRecord: true,
      async setup() {
        const path = `/api/v1/subscribers/${await subscriberId()}`;
        return { path, method: 'patch', writePath: path, body: { full_name: 'Grace Hopper' } };
      },
    },
    {
      name: 'POST /subscribers/{id}/status',
      answersRecord: true,
      async setup() {
        const path = `/api/v1/subscribers/${await subscriberId()}`;
        return { path, method: 'post', writePath: `${path}/status`, body: { status: 'active' } };
      },
    },
    {
      name: 'PATCH /billing-profiles/{id}',
      answersRecord: true,
      async setup() {
        const path = `/api/v1/billing-profiles/${(await createBillingProfile(t, tenant.token)).id}`;
        return { path, method: 'patch', writePath: path, body: { name: 'Renamed profile' } };
      },
    },
    {
      name: 'POST /invoices/{id}/finalize',
      answersRecord: true,
      async setup() {
        const invoice = await createInvoice(t, tenant.token, await subscriberId(), 1000, { draft: true });
        const path = `/api/v1/invoices/${invoice.id}`;
        return { path, method: 'post', writePath: `${path}/finalize` };
      },
    },
    {
      name: 'POST /invoices/{id}/void',
      answersRecord: true,
      async setup() {
        const path = `/api/v1/invoices/${(await createInvoice(t, tenant.token, await subscriberId())).id}`;
        return { path, method: 'post', writePath: `${path}/void` };
      },
    },
    {
      name: 'POST /transactions/{id}/allocate',
      answersRecord: true,
      async setup() {
        const payment = await createPayment(t, tenant.token, await subscriberId(), 500);
        const path = `/api/v1/transactions/${payment.id}`;
        return {
          path,
          method: 'post',
          writePath: `${path}/allocate`,
          body: { target: 'balance', amount: 200 },
        };
      },
    },
    {
      name: 'PATCH /tickets/{id}',
      answersRecord: true,
      async setup() {
        const path = `/api/v1/tickets/${(await createTicket(t, tenant.token)).id}`;
        return { path, method: 'patch', writePath: path, body: { priority: 'urgent' } };
      },
    },
    {
      name: 'POST /tickets/{id}/status',
      answersRecord: true,
      async setup() {
        const path = `/api/v1/tickets/${(await createTicket(t, tenant.token)).id}`;
        return { path, method: 'post', writePath: `${path}/status`, body: { status: 'open' } };
      },
    },
    {
      name: 'PATCH /service-plans/{id}',
      answersRecord: true,
      async setup() {
        const path = `/api/v1/service-plans/${(await createPlan(t, tenant.token)).id}`;
        return { path, method: 'patch', writePath: path, body: { active: false } };
      },
    },
    {
      name: 'PATCH /services/{id}',
      answersRecord: true,
      async setup() {
        const { service } = await createService(t, tenant.token, await subscriberId());
        const path = `/api/v1/services/${service.id}`;
        return { path, method: 'patch', writePath: path, body: { installation_address: '1 Main St' } };
      },
    },
    {
      name: 'POST /services/{id}/actions',
      answersRecord: false,
      async setup() {
        const { service, order } = await createService(t, tenant.token, await subscriberId());
        // The activate order is still open: cancel it so the service takes a new action.
        await send('post', `/api/v1/provisioning-orders/${order.id}/cancel`, undefined).expect(200);
        const path = `/api/v1/services/${service.id}`;
        return { path, method: 'post', writePath: `${path}/actions`, body: { action: 'activate' } };
      },
    },
    {
      name: 'POST /provisioning-orders/{id}/cancel',
      answersRecord: true,
      async setup() {
        const { order } = await createService(t, tenant.token, await subscriberId());
        const path = `/api/v1/provisioning-orders/${order.id}`;
        return { path, method: 'post', writePath: `${path}/cancel` };
      },
    },
    {
      name: 'PATCH /nas/{id}',
      answersRecord: true,
      async setup() {
        const path = `/api/v1/nas/${(await createNas(t, tenant.token)).id}`;
        return { path, method: 'patch', writePath: path, body: { description: 'Rack 4' } };
      },
    },
    {
      name: 'PATCH /ip-pools/{id}',
      answersRecord: true,
      async setup() {
        const path = `/api/v1/ip-pools/${(await createPool(t, tenant.token)).id}`;
        return { path, method: 'patch', writePath: path, body: { cooldown_s: 120 } };
      },
    },
    {
      name: 'DELETE /ip-pools/{id}',
      answersRecord: false,
      async setup() {
        const path = `/api/v1/ip-pools/${(await createPool(t, tenant.token)).id}`;
        return { path, method: 'delete', writePath: path };
      },
    },
    {
      name: 'DELETE /nas/{id}',
      answersRecord: false,
      async setup() {
        const path = `/api/v1/nas/${(await createNas(t, tenant.token)).id}`;
        return { path, method: 'delete', writePath: path };
      },
    },
    {
      name: 'PATCH /webhooks/{id}',
      answersRecord: true,
      async setup() {
        const webhook = await createWebhook(t.http, tenant.token, {
          url: 'https://hooks.example.net/isp',
          events: ['*'],
        });
        const path = `/api/v1/webhooks/${webhook.id}`;
        return { path, method: 'patch', writePath: path, body: { description: 'CRM sync' } };
      },
    },
    {
      name: 'POST /webhooks/{id}/rotate-secret',
      answersRecord: false,
      async setup() {
        const webhook = await createWebhook(t.http, tenant.token, {
          url: 'https://hooks.example.net/isp',
          events: ['*'],
        });
        const path = `/api/v1/webhooks/${webhook.id}`;
        return { path, method: 'post', writePath: `${path}/rotate-secret` };
      },
    },
    {
      name: 'DELETE /test-clocks/{id}',
      answersRecord: false,
      async setup() {
        const res = await send('post', '/api/v1/test-clocks', {
          name: 'ETag rehearsal',
          frozen_time: '2031-01-01T00:00:00.000Z',
        });
        const path = `/api/v1/test-clocks/${res.body.data.id}`;
        return { path, method: 'delete', writePath: path };
      },
    },
    {
      name: 'DELETE /webhooks/{id}',
      answersRecord: false,
      async setup() {
        const webhook = await createWebhook(t.http, tenant.token, {
          url: 'https://hooks.example.net/isp',
          events: ['*'],
        });
        const path = `/api/v1/webhooks/${webhook.id}`;
        return { path, method: 'delete', writePath: path };
      },
    },
  ];

  describe.each(writes)('$name', (write) => {
    it('should answer 412 precondition_failed to a stale If-Match and change nothing', async () => {
      const { path, method, writePath, body } = await write.setup();
      const before = await get(path);
      const events = await eventCountOf(idOf(path));
      for (const ifMatch of [STALE_TAG, `W/${before.headers.etag}`, `${STALE_TAG}, "other"`]) {
        const res = await send(method, writePath, body, { 'If-Match': ifMatch });
        expectError(res, 412, 'precondition_failed');
        expect(res.headers.etag).toBeUndefined();
      }
      const after = await get(path);
      expect(after.body.data).toEqual(before.body.data);
      expect(after.headers.etag).toBe(before.headers.etag);
      expect(await eventCountOf(idOf(path))).toBe(events);
    });

    it('should apply the write when If-Match names the current tag (or *) and answer the new tag', async () => {
      for (const current of [true, false]) {
        const { path, method, writePath, body } = await write.setup();
        const before = await get(path);
        const ifMatch = current ? `"other", ${before.headers.etag}` : '*';
        const res = await send(method, writePath, body, { 'If-Match': ifMatch });
        expect(res.status).toBeLessThan(300);
        expect(res.body.success).toBe(true);
        if (write.answersRecord) {
          const after = await get(path);
          expect(res.headers.etag).toMatch(STRONG_TAG);
          expect(res.headers.etag).not.toBe(before.headers.etag);
          expect(res.headers.etag).toBe(after.headers.etag);
        } else {
          expect(res.headers.etag).toBeUndefined();
        }
      }
    });
  });

  describe('two writes racing with the same If-Match', () => {
    it('should let exactly one win and answer the other 412', async () => {
      for (let round = 0; round < 5; round++) {
        const path = `/api/v1/subscribers/${await subscriberId()}`;
        const { etag } = (await get(path)).headers;
        const events = await eventCountOf(idOf(path));
        const answers: Response[] = await Promise.all(
          ['Grace Hopper', 'Katherine Johnson'].map((full_name) =>
            send('patch', path, { full_name }, { 'If-Match': etag }),
          ),
        );
        const statuses = answers.map((res) => res.status).sort();
        expect(statuses).toEqual([200, 412]);
        const winner = answers.find((res) => res.status === 200)!;
        const after = await get(path);
        expect(after.body.data.full_name).toBe(winner.body.data.full_name);
        expect(after.headers.etag).toBe(winner.headers.etag);
        expect(await eventCountOf(idOf(path))).toBe(events + 1);
      }
    });

    it('should let exactly one of two status changes win', async () => {
      const path = `/api/v1/subscribers/${await subscriberId()}`;
      const { etag } = (await get(path)).headers;
      const answers = await Promise.all(
        [{ status: 'active' }, { status: 'archived' }].map((body) =>
          send('post', `${path}/status`, body, { 'If-Match': etag }),
        ),
      );
      expect(answers.map((res) => res.status).sort()).toEqual([200, 412]);
    });
  });
});
