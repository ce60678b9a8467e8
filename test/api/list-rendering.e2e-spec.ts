import request from 'supertest';
import { expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  fullSubscriberBody,
  getSubscriber,
  postStatus,
  postSubscriber,
  SUBSCRIBER_SCOPES,
  type SubscriberRecord,
} from '../support/subscriber-factory';
import { BILLING_SCOPES, createPayment } from '../support/billing-factory';
import { createService, PROVISIONING_SCOPES, waitForOrder } from '../support/provisioning-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { createTicket, makeOverdue, TICKET_SCOPES, ticketIn } from '../support/ticket-factory';

/**
 * The long lists are rendered as JSON by Postgres (renderedPage), the single reads by the response DTOs in the
 * app: both must answer the same record with the same values, whatever the record holds.
 */
describe('Lists rendered by the database answer what single reads answer', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  /** Values whose JSON is easy to get wrong: escapes, control characters, non-ASCII, numbers of every kind. */
  const awkward = {
    full_name: 'Zoë "Q" O\'Brien \\ 東京 🚀',
    address: { line1: 'Flat 2\n12 Fibre Lane\t(rear)', city: 'Malmö', state: null, postal_code: '0010' },
    metadata: {
      plan: 'fibre/500',
      floor: 3,
      ratio: 0.1,
      big: 12345678901234,
      negative: -42.5,
      tiny: 1e-7,
      flag: false,
      none: null,
      '10': 'integer-like key',
      bell: 'a\u0007b\u001fc',
    },
  };

  beforeAll(async () => {
    t = await startTestApp({
      WEBHOOK_WORKER_ENABLED: 'false',
      PROVISIONING_POLL_MS: '50',
      PROVISIONING_RETRY_DELAYS_S: '0.05,0.05',
    });
    tenant = await createTenantWithToken(t, [
      ...new Set([...SUBSCRIBER_SCOPES, ...TICKET_SCOPES, ...PROVISIONING_SCOPES, ...BILLING_SCOPES]),
    ]);
  });
  afterAll(async () => {
    await t.close();
  });

  async function listed(path: string, query: Record<string, string> = {}) {
    const res = await request(t.http)
      .get(path)
      .query({ limit: '100', ...query })
      .set(bearer(tenant.token));
    expectList(res);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    return res.body as { data: { id: string }[]; meta: { pagination: { next_cursor: string | null } } };
  }

  it('should list each subscriber exactly as GET /subscribers/{id} answers it', async () => {
    const created: string[] = [];
    for (const body of [
      fullSubscriberBody(awkward),
      fullSubscriberBody({ email: undefined, phone: undefined, address: undefined, metadata: undefined }),
      fullSubscriberBody({ external_id: undefined, status: 'active' }),
    ]) {
      const res = await postSubscriber(t, tenant.token, body);
      expect(res.status).toBe(201);
      created.push(res.body.data.id as string);
    }
    expect((await postStatus(t, tenant.token, created[2], 'suspended', 'non_payment')).status).toBe(200);

    const page = await listed('/api/v1/subscribers');
    for (const id of created) {
      const single: SubscriberRecord = await getSubscriber(t, tenant.token, id);
      expect(page.data.find((item) => item.id === id)).toStrictEqual(single);
    }
  });

  it('should list each event exactly as GET /events/{id} answers it', async () => {
    const res = await postSubscriber(t, tenant.token, fullSubscriberBody(awkward));
    const subscriberId = res.body.data.id as string;
    expect((await postStatus(t, tenant.token, subscriberId, 'active')).status).toBe(200);

    const page = await listed('/api/v1/events', { subject_id: subscriberId });
    expect(page.data).toHaveLength(2);
    for (const item of page.data) {
      const single = await request(t.http).get(`/api/v1/events/${item.id}`).set(bearer(tenant.token));
      expect(single.status).toBe(200);
      expect(item).toStrictEqual(single.body.data);
    }
  });

  async function single(path: string) {
    const res = await request(t.http).get(path).set(bearer(tenant.token));
    expect(res.status).toBe(200);
    return res.body.data as Record<string, unknown>;
  }

  it('should list each ticket exactly as GET /tickets/{id} answers it, overdue included', async () => {
    const subscriber = await postSubscriber(t, tenant.token, fullSubscriberBody());
    const tickets = [
      await createTicket(t, tenant.token, {
        subject: awkward.full_name,
        description: awkward.address.line1,
        subscriber_id: subscriber.body.data.id,
        assignee: 'noc-team',
        tags: ['fibre', 'outage "north"', 'ü'],
        metadata: awkward.metadata,
      }),
      await createTicket(t, tenant.token),
      await ticketIn(t, tenant.token, 'closed'),
      await ticketIn(t, tenant.token, 'open'),
    ];
    await makeOverdue(t, tickets[3].id);
    await makeOverdue(t, tickets[2].id); // closed: its SLA no longer runs, so never overdue

    for (const path of ['/api/v1/tickets', `/api/v1/subscribers/${subscriber.body.data.id}/tickets`]) {
      const page = await listed(path);
      for (const ticket of path.includes('/subscribers/') ? tickets.slice(0, 1) : tickets) {
        const { status_history: history, ...expected } = await single(`/api/v1/tickets/${ticket.id}`);
        expect(history).toBeDefined();
        expect(page.data.find((item) => item.id === ticket.id)).toStrictEqual(expected);
      }
    }
    const overdue = (await listed('/api/v1/tickets')).data as unknown as { id: string; overdue: boolean }[];
    expect(overdue.filter((item) => item.overdue).map((item) => item.id)).toEqual([tickets[3].id]);
  });

  it('should list each provisioning order exactly as GET /provisioning-orders/{id} answers it', async () => {
    const subscriber = await postSubscriber(t, tenant.token, fullSubscriberBody());
    const { order } = await createService(t, tenant.token, subscriber.body.data.id as string);
    await waitForOrder(t, tenant.token, order.id, ['completed', 'failed']);
    const page = await listed('/api/v1/provisioning-orders');
    expect(page.data.find((item) => item.id === order.id)).toStrictEqual(
      await single(`/api/v1/provisioning-orders/${order.id}`),
    );
  });

  it('should list a ledger entry by entry as the database holds it', async () => {
    const subscriber = await postSubscriber(t, tenant.token, fullSubscriberBody());
    const subscriberId = subscriber.body.data.id as string;
    await createPayment(t, tenant.token, subscriberId, 123_456_789_012);
    await createPayment(t, tenant.token, subscriberId, 1);
    const page = await listed(`/api/v1/subscribers/${subscriberId}/ledger`);
    const rows: Record<string, string | Date>[] = await t.dataSource.query(
      `SELECT id, type, currency, amount, balance_after, source_id, created_at FROM ledger_entries
       WHERE subscriber_id = $1 ORDER BY created_at DESC, id DESC`,
      [subscriberId],
    );
    expect(page.data).toStrictEqual(
      rows.map((row) => ({
        id: row.id,
        type: row.type,
        currency: row.currency,
        amount: Number(row.amount),
        balance_after: Number(row.balance_after),
        source_id: row.source_id,
        created_at: (row.created_at as Date).toISOString(),
      })),
    );
  });

  it('should hand out a cursor that continues the list where the page ended', async () => {
    const all = await listed('/api/v1/subscribers');
    const first = await listed('/api/v1/subscribers', { limit: '2' });
    expect(first.data.map((item) => item.id)).toEqual(all.data.slice(0, 2).map((item) => item.id));
    const next = await listed('/api/v1/subscribers', {
      limit: '2',
      starting_after: first.meta.pagination.next_cursor!,
    });
    expect(next.data.map((item) => item.id)).toEqual(all.data.slice(2, 4).map((item) => item.id));
  });
});
