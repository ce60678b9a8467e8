import request, { type Response } from 'supertest';
import { PORTAL_OPERATIONS, type PortalSubject } from '../../src/common/auth/portal-policy';
import { operations } from '../reliability/support/openapi-operations';
import { createInvoice } from '../support/billing-factory';
import { expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { createPlan, createService } from '../support/provisioning-factory';
import { createSubscriber, uniqueEmail } from '../support/subscriber-factory';
import { createTicket } from '../support/ticket-factory';
import { portalSession } from '../support/portal-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

const SCOPES = ['subscribers:*', 'billing:*', 'tickets:*', 'provisioning:*', 'events:read'];

/** One subscriber's records of every kind a portal path names, made through the operator's API. */
interface Records {
  subscriber: string;
  invoice: string;
  credit_note: string;
  service: string;
  ticket: string;
}

/**
 * Issue #34 item 1: "the isolation suite tries every operation of openapi.json with a portal token, and each other
 * subscriber's ids". Every allow-listed operation is called with the other subscriber's own record of the kind its
 * path names (its invoice, credit note, service, ticket), not merely with an id of the wrong kind, and must answer
 * exactly as for an id that does not exist; the same call with the bound subscriber's record answers 2xx, so a 404
 * here is the binding's and not a broken route's.
 */
describe('Portal isolation: every allowed operation with another subscriber’s records', () => {
  let t: TestApp;
  let op: TenantWithToken;
  let mine: Records;
  let theirs: Records;
  let token: string;
  let plan: { id: string; name: string };

  async function recordsOf(planId: string): Promise<Records> {
    const subscriber = (await createSubscriber(t, op.token, { email: uniqueEmail() })).id;
    const invoice = await createInvoice(t, op.token, subscriber, 5000);
    const note = await request(t.http)
      .post(`/api/v1/invoices/${invoice.id}/credit-notes`)
      .set(bearer(op.token))
      .send({ reason: 'Outage', amount: 1000 });
    expectSuccess(note, 201);
    const { service } = await createService(t, op.token, subscriber, { plan_id: planId });
    const ticket = await createTicket(t, op.token, { subscriber_id: subscriber });
    return {
      subscriber,
      invoice: invoice.id,
      credit_note: note.body.data.id as string,
      service: service.id,
      ticket: ticket.id,
    };
  }

  function call(method: string, path: string, body?: object): Promise<Response> {
    const send = (request(t.http) as unknown as Record<string, (p: string) => request.Test>)
      [method](path)
      .set(bearer(token));
    return body === undefined ? send : send.send(body);
  }

  beforeAll(async () => {
    t = await startTestApp();
    op = await createTenantWithToken(t, SCOPES);
    plan = await createPlan(t, op.token, { download_kbps: 300_000, upload_kbps: 60_000 });
    mine = await recordsOf(plan.id);
    theirs = await recordsOf((await createPlan(t, op.token)).id);
    token = (await portalSession(t, op.token, mine.subscriber)).token;
  });
  afterAll(() => t.close());

  it("should answer 404 to each path naming another subscriber's record, and 2xx to the same path with its own", async () => {
    const pathSubjects: PortalSubject[] = ['subscriber', 'invoice', 'credit_note', 'service', 'ticket'];
    let walked = 0;
    for (const operation of operations()) {
      const rule = PORTAL_OPERATIONS[operation.operationId];
      if (!rule || !operation.pathParams.includes('id') || !pathSubjects.includes(rule.subject)) {
        continue;
      }
      const subject = rule.subject as keyof Records;
      const what = `${operation.method.toUpperCase()} ${operation.path} (${operation.operationId})`;
      const body =
        operation.operationId === 'updateSubscriber'
          ? { phone: '+15550100' }
          : operation.operationId === 'createTicketComment'
            ? { body: 'Any news?' }
            : operation.operationId === 'updateNotificationPreferences'
              ? {}
              : undefined;
      const at = (records: Records) => operation.path.replace('{id}', records[subject]);

      const foreign = await call(operation.method, at(theirs), body);
      expect([what, foreign.status, foreign.body?.error?.code]).toEqual([what, 404, 'not_found']);
      const own = await call(operation.method, at(mine), body);
      expect([what, own.status >= 200 && own.status < 300]).toEqual([what, true]);
      walked += 1;
    }
    // Every allow-listed operation with an {id} was walked (a new one with another subject fails here first).
    const expected = Object.entries(PORTAL_OPERATIONS).filter(([, rule]) =>
      pathSubjects.includes(rule.subject),
    ).length;
    expect(walked).toBe(expected);
  });

  it('should refuse a list filter or a new record naming another subscriber, and list only its own', async () => {
    for (const operation of operations()) {
      const rule = PORTAL_OPERATIONS[operation.operationId];
      const what = `${operation.method.toUpperCase()} ${operation.path} (${operation.operationId})`;
      if (rule?.subject === 'list') {
        const foreign = await call('get', `${operation.path}?subscriber_id=${theirs.subscriber}`);
        expect([what, foreign.status, foreign.body?.error?.field]).toEqual([what, 403, 'subscriber_id']);
        const own = await call('get', operation.path);
        expect([what, own.status]).toEqual([what, 200]);
        const owners = new Set(
          (own.body.data as { subscriber_id: string }[]).map((row) => row.subscriber_id),
        );
        expect([what, [...owners]]).toEqual([what, [mine.subscriber]]);
      } else if (rule?.subject === 'create') {
        const foreign = await call(operation.method, operation.path, {
          subject: 'Slow line',
          subscriber_id: theirs.subscriber,
        });
        expect([what, foreign.status, foreign.body?.error?.field]).toEqual([what, 403, 'subscriber_id']);
      }
    }
  });

  it('should never show its own draft invoices, which are not issued yet, until they are finalized', async () => {
    const draft = await createInvoice(t, op.token, mine.subscriber, 700, { draft: true });
    expect(draft.status).toBe('draft');
    for (const path of [`/api/v1/invoices/${draft.id}`, `/api/v1/invoices/${draft.id}/pdf`]) {
      const res = await call('get', path);
      expect([path, res.status, res.body?.error?.code]).toEqual([path, 404, 'not_found']);
    }
    const listed = await call('get', '/api/v1/invoices?limit=100');
    expectList(listed);
    const ids = (listed.body.data as { id: string }[]).map((invoice) => invoice.id);
    expect(ids).toContain(mine.invoice);
    expect(ids).not.toContain(draft.id);
    const asked = await call('get', '/api/v1/invoices?status=open,draft');
    expect([asked.status, asked.body.error?.code, asked.body.error?.field]).toEqual([
      403,
      'insufficient_scope',
      'status',
    ]);
    const open = await call('get', '/api/v1/invoices?status=open');
    expectList(open);
    expect((open.body.data as { status: string }[]).every((invoice) => invoice.status === 'open')).toBe(true);

    expectSuccess(await request(t.http).post(`/api/v1/invoices/${draft.id}/finalize`).set(bearer(op.token)));
    expectSuccess(await call('get', `/api/v1/invoices/${draft.id}`));
  });

  it("should name in the session the plans of its own services only, never the other subscriber's", async () => {
    const session = await call('get', '/api/v1/portal/session');
    expectSuccess(session);
    expect(session.body.data.plans).toEqual([
      { id: plan.id, name: plan.name, download_kbps: 300_000, upload_kbps: 60_000 },
    ]);
  });

  it("should leave the other subscriber's records as they were", async () => {
    const ticket = await request(t.http)
      .get(`/api/v1/tickets/${theirs.ticket}/comments`)
      .set(bearer(op.token));
    expectList(ticket);
    expect(ticket.body.data).toEqual([]);
    const subscriber = await request(t.http)
      .get(`/api/v1/subscribers/${theirs.subscriber}`)
      .set(bearer(op.token));
    expect(subscriber.body.data.phone).not.toBe('+15550100');
  });
});
