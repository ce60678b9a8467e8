import request, { type Response } from 'supertest';
import { type PortalView, PORTAL_VIEWS } from '../../src/common/auth/portal-fields';
import { createInvoice, createPayment } from '../support/billing-factory';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { insertRadacct, randomNasIp, uniqueAcctSessionId } from '../support/network-factory';
import { binary, pdfOf } from '../support/pdf-text';
import { createService, DEFAULT_PPPOE_PASSWORD } from '../support/provisioning-factory';
import { createSubscriber, listEvents, uniqueEmail, uniqueRef } from '../support/subscriber-factory';
import { portalSession } from '../support/portal-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { createTicket, postComment, postTicketStatus } from '../support/ticket-factory';

const SCOPES = [
  'subscribers:*',
  'billing:*',
  'tickets:*',
  'provisioning:*',
  'events:read',
  'notifications:*',
];

type Json = Record<string, unknown>;

/** A record's answer, or a list's (with its pagination). */
function expectAnswer(res: Response): void {
  if (Array.isArray(res.body?.data)) {
    expectList(res);
  } else {
    expectSuccess(res);
  }
}

/** Every field of the answer (nested ones by path) that the view does not show: none may be there. */
function unshown(view: PortalView, value: unknown, at = ''): string[] {
  if (Array.isArray(value)) {
    return value.flatMap((item) => unshown(view, item, at));
  }
  if (value === null || typeof value !== 'object') {
    return [];
  }
  return Object.entries(value).flatMap(([field, item]) => {
    const rule = Object.hasOwn(view, field) ? view[field] : false;
    if (rule === false) {
      return [`${at}${field}`];
    }
    return rule === true ? [] : unshown(rule, item, `${at}${field}.`);
  });
}

/**
 * Issue 34 item 1: what a portal session reads and writes of its own subscriber, through the operator's operations,
 * and that each answer shows the portal only what PORTAL_VIEWS shows (docs/portal.md, "What a portal sees") while the
 * operator reading the same record still gets all of it.
 */
describe('Portal: its own records, as a portal sees them', () => {
  let t: TestApp;
  let op: TenantWithToken;
  let mine: string;
  let theirs: string;
  let token: string;
  let serviceId: string;
  let invoiceId: string;
  let creditNoteId: string;

  const portal = {
    get: (path: string) => request(t.http).get(path).set(bearer(token)),
    post: (path: string, body?: object) => request(t.http).post(path).set(bearer(token)).send(body),
    patch: (path: string, body: object, headers: Record<string, string> = {}) =>
      request(t.http).patch(path).set(bearer(token)).set(headers).send(body),
  };
  const operator = (path: string) => request(t.http).get(path).set(bearer(op.token));

  /** The portal's answer shows only its view's fields (and not `hidden`); the operator's has `hidden` too. */
  async function expectTrimmed(
    path: string,
    view: keyof typeof PORTAL_VIEWS,
    hidden: string[],
  ): Promise<Response> {
    const res = await portal.get(path);
    expectAnswer(res);
    const data = res.body.data as unknown;
    expect(unshown(PORTAL_VIEWS[view], data)).toEqual([]);
    const first = (Array.isArray(data) ? data[0] : data) as Json;
    expect(first).toBeDefined();
    for (const field of hidden) {
      expect([field, Object.hasOwn(first, field)]).toEqual([field, false]);
    }
    const full = await operator(path);
    expectAnswer(full);
    const whole = (Array.isArray(full.body.data) ? full.body.data[0] : full.body.data) as Json;
    expect(Object.keys(whole)).toEqual(expect.arrayContaining(hidden));
    return res;
  }

  const signIn = async (subscriberId: string): Promise<string> =>
    (await portalSession(t, op.token, subscriberId)).token;

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1' });
    op = await createTenantWithToken(t, SCOPES);
    const subscriber = await createSubscriber(t, op.token, {
      email: uniqueEmail(),
      external_id: uniqueRef(),
      metadata: { crm_note: 'late payer' },
      address: { line1: '12 Fibre Lane', city: 'Springfield' },
    });
    mine = subscriber.id;
    theirs = (await createSubscriber(t, op.token, { email: uniqueEmail() })).id;
    const { service } = await createService(t, op.token, mine, {
      cpe_mac: 'AA-BB-CC-00-11-22',
      installation_address: '12 Fibre Lane',
    });
    serviceId = service.id;
    invoiceId = (await createInvoice(t, op.token, mine, 5000)).id;
    await createPayment(t, op.token, mine, 1000);
    const note = await request(t.http)
      .post(`/api/v1/invoices/${invoiceId}/credit-notes`)
      .set(bearer(op.token))
      .send({ reason: 'Outage 3-5 December', amount: 500 });
    expectSuccess(note, 201);
    creditNoteId = note.body.data.id as string;
    token = await signIn(mine);
  });
  afterAll(() => t.close());

  it('should read its profile without the operator-only fields, and change its contact with If-Match', async () => {
    const res = await expectTrimmed(`/api/v1/subscribers/${mine}`, 'Subscriber', [
      'metadata',
      'external_id',
      'billing_profile_id',
      'suspension_reason',
    ]);
    expect(res.body.data).toMatchObject({
      id: mine,
      address: { line1: '12 Fibre Lane', city: 'Springfield' },
    });
    expect(JSON.stringify(res.body.data)).not.toContain('late payer');

    // The tag a portal was given is the one its write is compared with (the trimmed view's, not the operator's).
    const tag = String(res.headers.etag);
    expect(tag).not.toBe(String((await operator(`/api/v1/subscribers/${mine}`)).headers.etag));
    const email = uniqueEmail();
    const changed = await portal.patch(
      `/api/v1/subscribers/${mine}`,
      { email, phone: '+14155550100' },
      { 'If-Match': tag },
    );
    expectSuccess(changed);
    expect(changed.body.data).toMatchObject({ email, phone: '+14155550100' });
    expect(unshown(PORTAL_VIEWS.Subscriber, changed.body.data)).toEqual([]);
    expectError(
      await portal.patch(`/api/v1/subscribers/${mine}`, { phone: '+14155550101' }, { 'If-Match': tag }),
      412,
      'precondition_failed',
    );
    const events = await listEvents(t, op.token, { type: 'subscriber.updated' });
    expect(events.find((event) => event.subject_id === mine)?.actor).toEqual({
      type: 'subscriber',
      id: mine,
    });
  });

  it('should read its services and their usage, never a password nor the network inventory', async () => {
    const hidden = ['ip_pool_id', 'ipv6_pool_id', 'cpe_mac', 'external_id'];
    for (const path of [
      `/api/v1/subscribers/${mine}/services`,
      '/api/v1/services',
      `/api/v1/services/${serviceId}`,
    ]) {
      const res = await expectTrimmed(path, 'Service', hidden);
      const text = JSON.stringify(res.body.data);
      expect(text).not.toContain(DEFAULT_PPPOE_PASSWORD);
      expect(text).not.toMatch(/password/i);
      expect(text).toContain(serviceId);
    }
    const listed = await portal.get('/api/v1/services');
    expect(new Set((listed.body.data as Json[]).map((service) => service.subscriber_id))).toEqual(
      new Set([mine]),
    );

    const service = (await operator(`/api/v1/services/${serviceId}`)).body.data as Json;
    const day = String(service.created_at).slice(0, 10);
    await insertRadacct(t, {
      acctsessionid: uniqueAcctSessionId(),
      username: String(service.radius_username),
      nasipaddress: randomNasIp(),
      acctstarttime: new Date(Date.parse(String(service.created_at)) + 1000),
      acctinputoctets: 1234,
      acctoutputoctets: 5678,
    });
    const usage = await portal.get(`/api/v1/services/${serviceId}/usage?from=${day}&to=${day}`);
    expectSuccess(usage);
    expect(usage.body.data).toEqual({
      service_id: serviceId,
      from: day,
      to: day,
      days: [{ date: day, bytes_in: 1234, bytes_out: 5678 }],
      total: { bytes_in: 1234, bytes_out: 5678 },
    });
  });

  it('should read its invoices and credit notes (and their PDFs) without numbering and tax configuration ids', async () => {
    await expectTrimmed('/api/v1/invoices', 'Invoice', ['sequence', 'write_off_reason']);
    const invoice = await expectTrimmed(`/api/v1/invoices/${invoiceId}`, 'Invoice', [
      'sequence',
      'write_off_reason',
    ]);
    expect(invoice.body.data).toMatchObject({ id: invoiceId, subscriber_id: mine, total: 5000 });
    expect(invoice.body.data.allocations.length).toBeGreaterThan(0);
    const line = invoice.body.data.lines[0] as Json;
    expect([line.description, Object.hasOwn(line, 'tax_rate_ids')]).toEqual(['Service', false]);
    expect(Object.keys((await operator(`/api/v1/invoices/${invoiceId}`)).body.data.lines[0])).toContain(
      'tax_rate_ids',
    );

    await expectTrimmed('/api/v1/credit-notes', 'CreditNote', ['sequence']);
    const note = await expectTrimmed(`/api/v1/credit-notes/${creditNoteId}`, 'CreditNote', ['sequence']);
    expect(note.body.data).toMatchObject({
      invoice_id: invoiceId,
      reason: 'Outage 3-5 December',
      total: 500,
    });

    pdfOf(await binary(portal.get(`/api/v1/invoices/${invoiceId}/pdf`)));
    pdfOf(await binary(portal.get(`/api/v1/credit-notes/${creditNoteId}/pdf`)));
    const foreign = await createInvoice(t, op.token, theirs, 700);
    const foreignNote = await request(t.http)
      .post(`/api/v1/invoices/${foreign.id}/credit-notes`)
      .set(bearer(op.token))
      .send({ reason: 'Goodwill', amount: 100 });
    expectSuccess(foreignNote, 201);
    expectError(await portal.get(`/api/v1/invoices/${foreign.id}/pdf`), 404, 'not_found');
    expectError(await portal.get(`/api/v1/credit-notes/${foreignNote.body.data.id}/pdf`), 404, 'not_found');
    expectError(await portal.get(`/api/v1/credit-notes/${foreignNote.body.data.id}`), 404, 'not_found');
    const notes = await portal.get('/api/v1/credit-notes');
    expect((notes.body.data as Json[]).map((n) => n.id)).toEqual([creditNoteId]);
  });

  it('should read its balance and statement (and the statement PDF)', async () => {
    const balance = await portal.get(`/api/v1/subscribers/${mine}/balance`);
    expectSuccess(balance);
    expect(balance.body.data).toEqual({
      subscriber_id: mine,
      balances: [expect.objectContaining({ currency: 'USD', open_invoices_due: 3500 })],
    });
    const statement = await portal.get(`/api/v1/subscribers/${mine}/statement`);
    expectSuccess(statement);
    expect(unshown(PORTAL_VIEWS.Statement, statement.body.data)).toEqual([]);
    expect(statement.body.data).toMatchObject({
      subscriber_id: mine,
      currency: 'USD',
      closing_balance: 3500,
    });
    expect((statement.body.data.entries as Json[]).map((entry) => entry.kind)).toEqual(
      expect.arrayContaining(['invoice', 'payment', 'credit_note']),
    );
    pdfOf(await binary(portal.get(`/api/v1/subscribers/${mine}/statement/pdf`)));
    expectError(await portal.get(`/api/v1/subscribers/${theirs}/statement/pdf`), 404, 'not_found');
  });

  it("should open, list and read its tickets without the operator's desk, and see public replies only", async () => {
    const created = await portal.post('/api/v1/tickets', { subject: 'Slow at night', priority: 'high' });
    expectSuccess(created, 201);
    expect(unshown(PORTAL_VIEWS.TicketDetail, created.body.data)).toEqual([]);
    const ticketId = created.body.data.id as string;
    const patched = await request(t.http)
      .patch(`/api/v1/tickets/${ticketId}`)
      .set(bearer(op.token))
      .send({ assignee: 'noc.jane', tags: ['vip'], metadata: { churn_risk: 'high' } });
    expectSuccess(patched);
    expectSuccess(await postTicketStatus(t, op.token, ticketId, 'open'));
    expectSuccess(
      await postComment(t, op.token, ticketId, { body: 'customer sounds angry', public: false }),
      201,
    );
    expectSuccess(
      await postComment(t, op.token, ticketId, { body: 'We are on it', public: true, author: 'noc.jane' }),
      201,
    );
    const hidden = ['assignee', 'tags', 'metadata', 'due_at', 'overdue'];
    await expectTrimmed('/api/v1/tickets', 'Ticket', hidden);
    await expectTrimmed(`/api/v1/subscribers/${mine}/tickets`, 'Ticket', hidden);
    const ticket = await expectTrimmed(`/api/v1/tickets/${ticketId}`, 'TicketDetail', hidden);
    expect(ticket.body.data.status_history.map((move: Json) => Object.keys(move).sort())).toEqual(
      ticket.body.data.status_history.map(() => ['at', 'from', 'to']),
    );
    expect(JSON.stringify(ticket.body.data)).not.toMatch(/noc\.jane|churn_risk|vip/);

    const reply = await portal.post(`/api/v1/tickets/${ticketId}/comments`, { body: 'Thanks!' });
    expectSuccess(reply, 201);
    expect(reply.body.data).toMatchObject({ public: true, author_type: 'subscriber', body: 'Thanks!' });
    const comments = await expectTrimmed(`/api/v1/tickets/${ticketId}/comments`, 'Comment', ['author']);
    expect((comments.body.data as Json[]).map((c) => c.body)).toEqual(['We are on it', 'Thanks!']);
    expect(JSON.stringify(comments.body.data)).not.toMatch(/noc\.jane|angry/);

    const foreign = await createTicket(t, op.token, { subscriber_id: theirs });
    expectError(await portal.get(`/api/v1/tickets/${foreign.id}/comments`), 404, 'not_found');
  });

  it('should trim an idempotent replay like the answer it replays', async () => {
    const key = { 'Idempotency-Key': uniqueRef('idem') };
    const send = () =>
      request(t.http).post('/api/v1/tickets').set(bearer(token)).set(key).send({ subject: 'Replay me' });
    const first = await send();
    expectSuccess(first, 201);
    const replay = await send();
    expectSuccess(replay, 201);
    expect(replay.body.data).toEqual(first.body.data);
    expect(unshown(PORTAL_VIEWS.TicketDetail, replay.body.data)).toEqual([]);
    expect(Object.keys(replay.body.data)).not.toContain('due_at');
  });

  it('should read and switch its notification preferences, as the actor of the event', async () => {
    const read = await portal.get(`/api/v1/subscribers/${mine}/notification-preferences`);
    expectSuccess(read);
    expect(read.body.data).toMatchObject({ subscriber_id: mine, preferences: { payment_received: true } });
    const res = await portal.patch(
      `/api/v1/subscribers/${mine}/notification-preferences`,
      { payment_received: false },
      { 'If-Match': String(read.headers.etag) },
    );
    expectSuccess(res);
    expect(res.body.data.preferences.payment_received).toBe(false);
    expect(unshown(PORTAL_VIEWS.NotificationPreferences, res.body.data)).toEqual([]);
    const events = await listEvents(t, op.token, { type: 'notification_preferences.updated' });
    expect(events.find((event) => event.subject_id === mine)?.actor).toEqual({
      type: 'subscriber',
      id: mine,
    });
  });

  it('should answer its session with only the fields of a session', async () => {
    const res = await portal.get('/api/v1/portal/session');
    expectSuccess(res);
    expect(Object.keys(res.body.data).sort()).toEqual([
      'created_at',
      'expires_at',
      'id',
      'method',
      'plans',
      'subscriber_id',
      'tenant',
    ]);
    expect(unshown(PORTAL_VIEWS.PortalSessionInfo, res.body.data)).toEqual([]);
    expectList(await portal.get('/api/v1/invoices'));
  });
});
