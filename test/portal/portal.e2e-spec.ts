import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import request, { type Response } from 'supertest';
import { PORTAL_OPERATIONS } from '../../src/common/auth/portal-policy';
import { OPENAPI_PATH, operations } from '../reliability/support/openapi-operations';
import { createInvoice } from '../support/billing-factory';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer, randomClientIp } from '../support/factories';
import { createSubscriber, listEvents, uniqueEmail } from '../support/subscriber-factory';
import { createTicket, postComment } from '../support/ticket-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

/** The operationIds the document marks public (`security: [{}]`): no token needed, so no portal rule either. */
const PUBLIC_OPERATIONS = new Set(
  Object.values(
    JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')).paths as Record<string, Record<string, unknown>>,
  )
    .flatMap((item) => Object.values(item))
    .filter((op) => JSON.stringify((op as { security?: unknown }).security) === '[{}]')
    .map((op) => (op as { operationId: string }).operationId),
);

/** Every log line the app writes, to look for secrets in. */
class LogCapture extends Writable {
  readonly raw: string[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.raw.push(chunk.toString('utf8'));
    done();
  }
}

const SCOPES = [
  'subscribers:*',
  'billing:*',
  'tickets:*',
  'provisioning:*',
  'events:read',
  'notifications:*',
];

interface Session {
  id: string;
  token: string;
  subscriber_id: string;
  scope: string;
}

describe('Portal: subscriber-scoped access (docs/portal.md)', () => {
  let t: TestApp;
  let op: TenantWithToken;
  let mine: string;
  let theirs: string;
  let session: Session;
  const secrets: string[] = [];
  const logs = new LogCapture();

  function invite(subscriberId: string, token = op.token) {
    return request(t.http).post(`/api/v1/subscribers/${subscriberId}/portal-invites`).set(bearer(token));
  }

  function signIn(code: string, ip = randomClientIp()) {
    return request(t.http)
      .post('/api/v1/portal/sessions')
      .set('X-Forwarded-For', ip)
      .send({ invite_code: code });
  }

  async function newSession(subscriberId: string): Promise<Session> {
    const made = await invite(subscriberId);
    expectSuccess(made, 201);
    secrets.push(made.body.data.code);
    const res = await signIn(made.body.data.code);
    expectSuccess(res, 201);
    secrets.push(res.body.data.token);
    return res.body.data as Session;
  }

  const as = (token: string) => ({
    get: (path: string) => request(t.http).get(path).set(bearer(token)),
    post: (path: string, body?: object) => request(t.http).post(path).set(bearer(token)).send(body),
    patch: (path: string, body: object) => request(t.http).patch(path).set(bearer(token)).send(body),
    delete: (path: string) => request(t.http).delete(path).set(bearer(token)),
  });

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1', LOG_LEVEL: 'info' }, { logDestination: logs });
    op = await createTenantWithToken(t, SCOPES);
    mine = (await createSubscriber(t, op.token, { email: uniqueEmail() })).id;
    theirs = (await createSubscriber(t, op.token, { email: uniqueEmail() })).id;
    session = await newSession(mine);
  });
  afterAll(() => t.close());

  it('should issue an invite whose code signs in once, to a token bound to its subscriber', async () => {
    const made = await invite(mine);
    expectSuccess(made, 201);
    expect(made.headers['cache-control']).toBe('no-store');
    expect(made.body.data).toMatchObject({ subscriber_id: mine, url: null });
    expect(made.body.data.code).toMatch(/^ipi_/);
    const first = await signIn(made.body.data.code);
    expectSuccess(first, 201);
    expect(first.body.data).toMatchObject({ subscriber_id: mine, scope: 'portal', method: 'invite' });
    expect(first.body.data.token).toMatch(/^ipt_/);
    expectError(await signIn(made.body.data.code), 401, 'invalid_invite', 'invite_code');
    expectError(await signIn('ipi_nothing'), 401, 'invalid_invite', 'invite_code');
    secrets.push(made.body.data.code, first.body.data.token);
  });

  it('should let exactly one of two racing sign-ins with one code win', async () => {
    const made = await invite(mine);
    secrets.push(made.body.data.code);
    const answers = await Promise.all([signIn(made.body.data.code), signIn(made.body.data.code)]);
    expect(answers.map((res) => res.status).sort()).toEqual([201, 401]);
    secrets.push(...answers.filter((res) => res.status === 201).map((res) => res.body.data.token as string));
  });

  it('should refuse an invite for a subscriber of another tenant, and to a portal token', async () => {
    const other = await createTenantWithToken(t, SCOPES);
    expectError(await invite(mine, other.token), 404, 'not_found');
    expectError(await invite(mine, session.token), 403, 'insufficient_scope');
  });

  it('should answer the session with the tenant the portal shows; an API token gets 403', async () => {
    const res = await as(session.token).get('/api/v1/portal/session');
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ id: session.id, subscriber_id: mine });
    expect(res.body.data.tenant).toEqual(
      expect.objectContaining({ id: op.tenantId, locale: expect.any(String), payment_instructions: null }),
    );
    expectError(await as(op.token).get('/api/v1/portal/session'), 403, 'insufficient_scope');
  });

  it("should answer the bound subscriber's records and 404 another's", async () => {
    const portal = as(session.token);
    expectSuccess(await portal.get(`/api/v1/subscribers/${mine}`));
    expectError(await portal.get(`/api/v1/subscribers/${theirs}`), 404, 'not_found');
    expectSuccess(await portal.get(`/api/v1/subscribers/${mine}/balance`));
    expectError(await portal.get(`/api/v1/subscribers/${theirs}/balance`), 404, 'not_found');

    const own = await createInvoice(t, op.token, mine);
    const other = await createInvoice(t, op.token, theirs);
    expectSuccess(await portal.get(`/api/v1/invoices/${own.id}`));
    expectError(await portal.post(`/api/v1/invoices/${own.id}/finalize`), 403, 'insufficient_scope');
    const pdf = await portal.get(`/api/v1/invoices/${own.id}/pdf`);
    expect([pdf.status, pdf.headers['content-type']]).toEqual([200, 'application/pdf']);
    expectError(await portal.get(`/api/v1/invoices/${other.id}/pdf`), 404, 'not_found');
    expectSuccess(await portal.get(`/api/v1/subscribers/${mine}/statement`));
    expectError(await portal.get(`/api/v1/invoices/${other.id}`), 404, 'not_found');
    const list = await portal.get('/api/v1/invoices');
    expectList(list);
    const listed = (list.body.data as { subscriber_id: string }[]).map((invoice) => invoice.subscriber_id);
    expect(listed.length).toBeGreaterThan(0);
    expect(new Set(listed)).toEqual(new Set([mine]));
    expectError(
      await portal.get(`/api/v1/invoices?subscriber_id=${theirs}`),
      403,
      'insufficient_scope',
      'subscriber_id',
    );
  });

  it('should open tickets for the subscriber and keep its comments public, never showing internal ones', async () => {
    const portal = as(session.token);
    const created = await portal.post('/api/v1/tickets', { subject: 'No internet' });
    expectSuccess(created, 201);
    expect(created.body.data.subscriber_id).toBe(mine);
    expectError(
      await portal.post('/api/v1/tickets', { subject: 'x', subscriber_id: theirs }),
      403,
      'insufficient_scope',
      'subscriber_id',
    );
    expectError(
      await portal.post('/api/v1/tickets', { subject: 'x', assignee: 'me' }),
      403,
      'insufficient_scope',
      'assignee',
    );
    const ticket = created.body.data.id as string;
    expectSuccess(await postComment(t, op.token, ticket, { body: 'internal note', public: false }), 201);
    expectSuccess(await postComment(t, op.token, ticket, { body: 'We are on it', public: true }), 201);
    const reply = await portal.post(`/api/v1/tickets/${ticket}/comments`, { body: 'Thanks' });
    expectSuccess(reply, 201);
    expect(reply.body.data).toMatchObject({ public: true, author_type: 'subscriber' });
    expectError(
      await portal.post(`/api/v1/tickets/${ticket}/comments`, { body: 'psst', public: false }),
      403,
      'insufficient_scope',
      'public',
    );
    const comments = await portal.get(`/api/v1/tickets/${ticket}/comments`);
    expectList(comments);
    expect((comments.body.data as { body: string }[]).map((c) => c.body)).toEqual(['We are on it', 'Thanks']);
    const foreign = await createTicket(t, op.token, { subscriber_id: theirs });
    expectError(await portal.get(`/api/v1/tickets/${foreign.id}`), 404, 'not_found');
    expectError(
      await portal.post(`/api/v1/tickets/${foreign.id}/comments`, { body: 'hi' }),
      404,
      'not_found',
    );
  });

  it('should let the subscriber change its email and phone only, as the actor of the event', async () => {
    const portal = as(session.token);
    const email = uniqueEmail();
    const res = await portal.patch(`/api/v1/subscribers/${mine}`, { email, phone: '+14155550100' });
    expectSuccess(res);
    expect(res.body.data.email).toBe(email);
    expectError(
      await portal.patch(`/api/v1/subscribers/${mine}`, { full_name: 'Someone Else' }),
      403,
      'insufficient_scope',
      'full_name',
    );
    expectError(
      await portal.patch(`/api/v1/subscribers/${theirs}`, { email: uniqueEmail() }),
      404,
      'not_found',
    );
    const events = await listEvents(t, op.token, { type: 'subscriber.updated' });
    const mineUpdated = events.find((event) => event.subject_id === mine);
    expect(mineUpdated?.actor).toEqual({ type: 'subscriber', id: mine });
  });

  it('should refuse every operation of the document that is not on the allow-list, and hold the rest to its subscriber', async () => {
    const portal = as(session.token);
    const ids: Record<string, string> = { id: theirs, chargeId: 'chg_00000000000000000000000000' };
    let refusedCount = 0;
    for (const operation of operations()) {
      if (PUBLIC_OPERATIONS.has(operation.operationId) || operation.operationId === 'deletePortalSession') {
        continue; // no token needed; signing out is tested on its own
      }
      const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? 'x_1');
      const send = request(t.http)[operation.method](path).set(bearer(session.token));
      const res: Response = await (operation.bodySchema ? send.send({}) : send);
      const what = `${operation.method.toUpperCase()} ${operation.path} (${operation.operationId})`;
      if (!(operation.operationId in PORTAL_OPERATIONS)) {
        expect([what, res.status, res.body.error?.code]).toEqual([what, 403, 'insufficient_scope']);
        refusedCount += 1;
      } else if (operation.pathParams.includes('id')) {
        // Another subscriber's id (or a record id that is not the subscriber's): as if it did not exist.
        expect([what, res.status]).toEqual([what, 404]);
      }
    }
    expect(refusedCount).toBeGreaterThan(80);
    // The session is still there: the walk never reached another subscriber's data.
    expectSuccess(await portal.get('/api/v1/portal/session'));
  });

  it('should end a session when the subscriber signs out, and all of them when an operator revokes them', async () => {
    const out = await newSession(mine);
    expectSuccess(await as(out.token).delete('/api/v1/portal/session'));
    expectError(await as(out.token).get('/api/v1/portal/session'), 401, 'invalid_token');

    const a = await newSession(mine);
    const b = await newSession(mine);
    const revoked = await as(op.token).delete(`/api/v1/subscribers/${mine}/portal-sessions`);
    expectSuccess(revoked);
    expect(revoked.body.data.revoked).toBeGreaterThanOrEqual(2);
    for (const s of [a, b, session]) {
      expectError(await as(s.token).get(`/api/v1/subscribers/${mine}`), 401, 'invalid_token');
    }
    const events = await listEvents(t, op.token, { type: 'portal.session_revoked' });
    expect(events.find((event) => event.data.object.id === out.id)?.actor).toEqual({
      type: 'subscriber',
      id: mine,
    });
    expect(events.find((event) => event.data.object.id === a.id)?.actor.type).toBe('token');
  });

  it('should write no code and no token to the log', () => {
    const everything = logs.raw.join('');
    expect(everything).toContain('"msg":"request"');
    for (const secret of secrets) {
      expect(everything).not.toContain(secret);
    }
  });

  it('should record invites and sign-ins as events that never hold a code or a token', async () => {
    const events = await listEvents(t, op.token, {});
    for (const type of ['portal.invite_created', 'portal.signed_in', 'portal.session_revoked']) {
      expect(events.some((event) => event.type === type)).toBe(true);
    }
    const text = JSON.stringify(await listEvents(t, op.token, { limit: '100' }));
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
    }
  });
});

describe('Portal: sign-in attempts are limited per IP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1', PORTAL_SIGN_IN_MAX_PER_IP: '2' });
  });
  afterAll(() => t.close());

  it('should answer 429 past PORTAL_SIGN_IN_MAX_PER_IP attempts from one address', async () => {
    const ip = randomClientIp();
    const attempt = () =>
      request(t.http)
        .post('/api/v1/portal/sessions')
        .set('X-Forwarded-For', ip)
        .send({ invite_code: 'ipi_guess' });
    expectError(await attempt(), 401, 'invalid_invite', 'invite_code');
    expectError(await attempt(), 401, 'invalid_invite', 'invite_code');
    const limited = await attempt();
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});
