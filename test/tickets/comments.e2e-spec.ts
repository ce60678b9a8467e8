import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { expectError, expectList, expectSuccess, expectNotFound, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import { type EventBody, listEvents } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import {
  COMMENT_ID,
  createTicket,
  postComment,
  postTicketStatus,
  TICKET_SCOPES,
  type Ticket,
} from '../support/ticket-factory';
import {
  createWebhook,
  WebhookReceiver,
  DELIVERY_ENV,
  closeDeliverySuite,
} from '../support/webhook-receiver';

/** Loopback receivers and plain http allowed, quick polling and retries (as test/webhooks/delivery.e2e-spec.ts). */
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const COMMENT_KEYS = ['author', 'author_type', 'body', 'created_at', 'id', 'public', 'ticket_id'];

type Status = 'new' | 'open' | 'pending_customer' | 'on_hold' | 'resolved' | 'closed' | 'cancelled';
type Ticketed = Ticket & { status_history: NonNullable<Ticket['status_history']> };

/** Allowed moves from new to each state (with the reason the moves to on_hold and cancelled need). */
const PATH: Record<Status, [Status, string?][]> = {
  new: [],
  open: [['open']],
  pending_customer: [['open'], ['pending_customer']],
  on_hold: [['open'], ['on_hold', 'waiting for parts']],
  resolved: [['open'], ['resolved']],
  closed: [['open'], ['resolved'], ['closed']],
  cancelled: [['cancelled', 'opened by mistake']],
};

interface Comment {
  id: string;
  ticket_id: string;
  body: string;
  public: boolean;
  author: string | null;
  author_type: string;
  created_at: string;
}

/** Text no other test sends, to look for in logs and payloads. */
function secretText(label: string): string {
  return `${label} ${randomBytes(8).toString('hex')}`;
}

describe('Tickets: comments', () => {
  let t: TestApp;
  let desk: TenantWithToken;
  const tenants: TenantWithToken[] = [];
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestApp(DELIVERY_ENV);
    desk = await createTenantWithToken(t, TICKET_SCOPES);
  });
  afterAll(() => closeDeliverySuite(t, tenants, receivers));

  async function getTicket(id: string, token = desk.token): Promise<Ticketed> {
    const res = await request(t.http).get(`/api/v1/tickets/${id}`).set(bearer(token));
    expectSuccess(res);
    return res.body.data as Ticketed;
  }

  /** A fresh ticket driven to `status` through allowed moves. */
  async function ticketIn(status: Status, token = desk.token): Promise<Ticketed> {
    const ticket = await createTicket(t, token);
    for (const [to, reason] of PATH[status]) {
      expectSuccess(await postTicketStatus(t, token, ticket.id, to, reason));
    }
    const now = await getTicket(ticket.id, token);
    expect(now.status).toBe(status);
    return now;
  }

  async function comment(id: string, body: Record<string, unknown>, token = desk.token): Promise<Comment> {
    const res = await postComment(t, token, id, body);
    expectSuccess(res, 201);
    return res.body.data as Comment;
  }

  function listComments(id: string, query: Record<string, string> = {}, token = desk.token) {
    return request(t.http).get(`/api/v1/tickets/${id}/comments`).query(query).set(bearer(token));
  }

  /** Every comment of the ticket, walked `limit` at a time, with each page's pagination checked. */
  async function walkComments(id: string, limit: number, query: Record<string, string> = {}) {
    const seen: Comment[] = [];
    const pages: number[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const res = await listComments(id, {
        ...query,
        limit: String(limit),
        ...(cursor === null ? {} : { starting_after: cursor }),
      });
      expectList(res);
      const rows = res.body.data as Comment[];
      const pagination = res.body.meta.pagination as { has_more: boolean; next_cursor: string | null };
      seen.push(...rows);
      pages.push(rows.length);
      if (!pagination.has_more) {
        expect(pagination.next_cursor).toBeNull();
        return { seen, pages };
      }
      expect(rows).toHaveLength(limit);
      expect(typeof pagination.next_cursor).toBe('string');
      cursor = pagination.next_cursor;
    }
    throw new Error('the comment list never ended');
  }

  async function allComments(id: string, token = desk.token): Promise<Comment[]> {
    const res = await listComments(id, { limit: '100' }, token);
    expectList(res);
    return res.body.data as Comment[];
  }

  describe('POST /api/v1/tickets/{id}/comments: validation per field', () => {
    const valid = { body: 'We are looking into it.', public: true };

    it.each([
      ['body absent', { public: true }, 400, 'missing_field', 'body'],
      ['body null', { body: null, public: true }, 400, 'missing_field', 'body'],
      ['body empty', { body: '', public: true }, 422, 'validation_failed', 'body'],
      [
        'body of 10,001 characters',
        { body: 'b'.repeat(10_001), public: true },
        422,
        'validation_failed',
        'body',
      ],
      ['body a number', { body: 42, public: true }, 422, 'validation_failed', 'body'],
      ['body a boolean', { body: true, public: true }, 422, 'validation_failed', 'body'],
      ['body an array', { body: ['hello'], public: true }, 422, 'validation_failed', 'body'],
      ['body an object', { body: { text: 'hello' }, public: true }, 422, 'validation_failed', 'body'],
      ['public absent', { body: 'hello' }, 400, 'missing_field', 'public'],
      ['public null', { body: 'hello', public: null }, 400, 'missing_field', 'public'],
      ['public a string', { body: 'hello', public: 'true' }, 422, 'validation_failed', 'public'],
      ['public a number', { body: 'hello', public: 1 }, 422, 'validation_failed', 'public'],
      ['author of 201 characters', { ...valid, author: 'a'.repeat(201) }, 422, 'validation_failed', 'author'],
      ['author empty', { ...valid, author: '' }, 422, 'validation_failed', 'author'],
      ['author a number', { ...valid, author: 7 }, 422, 'validation_failed', 'author'],
      [
        'author_type customer',
        { ...valid, author_type: 'customer' },
        422,
        'validation_failed',
        'author_type',
      ],
      ['author_type AGENT', { ...valid, author_type: 'AGENT' }, 422, 'validation_failed', 'author_type'],
      ['author_type a number', { ...valid, author_type: 1 }, 422, 'validation_failed', 'author_type'],
      [
        'an internal subscriber comment',
        { body: 'hello', public: false, author_type: 'subscriber' },
        422,
        'validation_failed',
        'public',
      ],
      ['an unknown field', { ...valid, visibility: 'public' }, 400, 'unknown_field', 'visibility'],
      [
        'ticket_id in the body',
        { ...valid, ticket_id: 'tkt_00000000000000000000000000' },
        400,
        'unknown_field',
        'ticket_id',
      ],
    ])('should refuse %s with %i %s (field %s)', async (_label, body, status, code, field) => {
      const ticket = await ticketIn('pending_customer');
      const res = await postComment(t, desk.token, ticket.id, body);
      expectError(res, status, code, field);
      expect(await allComments(ticket.id)).toEqual([]);
      expect(await getTicket(ticket.id)).toEqual(ticket);
      const events = await listEvents(t, desk.token, { subject_id: ticket.id, type: 'ticket.comment_added' });
      expect(events).toEqual([]);
    });

    it('should take a body of exactly 10,000 characters verbatim and an author of 200', async () => {
      const ticket = await ticketIn('open');
      const body: string = `  ${'b'.repeat(9_995)}\n\t `;
      expect(body).toHaveLength(10_000);
      const made = await comment(ticket.id, { body, public: false, author: 'a'.repeat(200) });
      expect(made.body).toBe(body);
      expect(made.author).toBe('a'.repeat(200));
      expect((await allComments(ticket.id)).map((row) => row.body)).toEqual([body]);
    });

    it('should answer 404 not_found for an unknown ticket and for another tenant’s', async () => {
      const other = await createTenantWithToken(t, TICKET_SCOPES);
      const theirs = await createTicket(t, other.token);
      const body = { body: 'hello', public: true };
      expectNotFound(await postComment(t, desk.token, theirs.id, body));
      expectNotFound(await postComment(t, desk.token, 'tkt_00000000000000000000000000', body));
      expectNotFound(await listComments(theirs.id));
      const res = await listComments(theirs.id, {}, other.token);
      expectList(res);
      expect(res.body.data).toEqual([]);
    });
  });

  describe('POST /api/v1/tickets/{id}/comments: the answer', () => {
    it('should answer 201 with the comment, author_type agent and author null by default', async () => {
      const ticket = await ticketIn('open');
      const before = Date.now();
      const res = await postComment(t, desk.token, ticket.id, {
        body: 'Checking the line now.',
        public: true,
      });
      const made = successRecord<Comment>(res, COMMENT_KEYS, 201);
      expect(made).toEqual({
        id: expect.stringMatching(COMMENT_ID),
        ticket_id: ticket.id,
        body: 'Checking the line now.',
        public: true,
        author: null,
        author_type: 'agent',
        created_at: expect.stringMatching(ISO_MS),
      });
      expect(Date.parse(made.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(made.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
      expect(await allComments(ticket.id)).toEqual([made]);
    });

    it.each([
      [{ body: 'Replaced the ONT.', public: false, author: 'noc.jane', author_type: 'agent' }],
      [{ body: 'It works again, thanks!', public: true, author: 'Ada Lovelace', author_type: 'subscriber' }],
      [{ body: 'Line test passed.', public: false, author_type: 'system' }],
      [{ body: 'Outage in your area.', public: true, author_type: 'system' }],
    ])('should keep what was sent: %j', async (sent) => {
      const ticket = await ticketIn('open');
      const made = await comment(ticket.id, sent);
      expect(made).toEqual({
        id: expect.stringMatching(COMMENT_ID),
        ticket_id: ticket.id,
        author: null,
        ...sent,
        created_at: expect.stringMatching(ISO_MS),
      });
      expect(await allComments(ticket.id)).toEqual([made]);
    });
  });

  describe('GET /api/v1/tickets/{id}/comments', () => {
    let ticketId: string;
    let made: Comment[];

    beforeAll(async () => {
      const ticket = await ticketIn('open');
      ticketId = ticket.id;
      made = [];
      const visibility = [true, false, true, true, false, false, true, false, true, true, false];
      for (const [i, isPublic] of visibility.entries()) {
        made.push(await comment(ticketId, { body: `comment ${i}`, public: isPublic }));
      }
    });

    it('should list the comments oldest first', async () => {
      expect(await allComments(ticketId)).toEqual(made);
      const times = made.map((row) => row.created_at);
      expect([...times].sort()).toEqual(times);
    });

    it.each([1, 2, 3, 5, 11, 12])('should walk %i at a time without gaps or repeats', async (limit) => {
      const { seen, pages } = await walkComments(ticketId, limit);
      expect(seen).toEqual(made);
      expect(new Set(seen.map((row) => row.id)).size).toBe(made.length);
      expect(pages.reduce((sum, n) => sum + n, 0)).toBe(made.length);
    });

    it.each([
      ['true', true],
      ['false', false],
    ] as const)(
      'should list only public=%s comments, oldest first, also page by page',
      async (value, isPublic) => {
        const expected = made.filter((row) => row.public === isPublic);
        expect(expected.length).toBeGreaterThan(2);
        const res = await listComments(ticketId, { public: value, limit: '100' });
        expectList(res);
        expect(res.body.data).toEqual(expected);
        const { seen } = await walkComments(ticketId, 2, { public: value });
        expect(seen).toEqual(expected);
      },
    );

    it.each(['yes', '1', 'TRUE', ''])(
      'should answer 400 invalid_query public for public=%p',
      async (value) => {
        expectError(await listComments(ticketId, { public: value }), 400, 'invalid_query', 'public');
      },
    );
  });

  describe('the customer reply reopens', () => {
    it.each(['pending_customer', 'resolved'] as const)(
      'should move a %s ticket to open on a public subscriber comment (customer_replied)',
      async (from) => {
        const ticket = await ticketIn(from);
        const res = await postComment(t, desk.token, ticket.id, {
          body: 'Still no internet here.',
          public: true,
          author_type: 'subscriber',
        });
        expectSuccess(res, 201);
        const after = await getTicket(ticket.id);
        expect(after.status).toBe('open');
        expect(after.resolved_at).toBeNull();
        expect(after.status_history).toHaveLength(ticket.status_history.length + 1);
        expect(after.status_history.at(-1)).toEqual({
          from,
          to: 'open',
          reason: 'customer_replied',
          actor: { type: 'token', id: desk.tokenId },
          at: expect.stringMatching(ISO_MS),
        });

        const [event] = await listEvents(t, desk.token, {
          subject_id: ticket.id,
          type: 'ticket.status_changed',
        });
        expect(event.data).toMatchObject({ from, to: 'open', reason: 'customer_replied' });
        expect(event.data.object).toMatchObject({ id: ticket.id, status: 'open', resolved_at: null });
        expect(event.request_id).toBe(res.body.meta.request_id);
      },
    );

    it.each([
      ['pending_customer', 'an internal agent comment', { public: false }],
      ['pending_customer', 'a public agent comment', { public: true, author_type: 'agent' }],
      ['pending_customer', 'an internal system comment', { public: false, author_type: 'system' }],
      ['pending_customer', 'a public system comment', { public: true, author_type: 'system' }],
      ['resolved', 'an internal agent comment', { public: false }],
      ['resolved', 'a public agent comment', { public: true, author_type: 'agent' }],
      ['resolved', 'a public system comment', { public: true, author_type: 'system' }],
      ['open', 'a public subscriber comment', { public: true, author_type: 'subscriber' }],
      ['on_hold', 'a public subscriber comment', { public: true, author_type: 'subscriber' }],
      ['new', 'a public subscriber comment', { public: true, author_type: 'subscriber' }],
    ] as const)('should leave a %s ticket as it is on %s', async (status, _label, fields) => {
      const ticket = await ticketIn(status);
      const statusEvents = await listEvents(t, desk.token, {
        subject_id: ticket.id,
        type: 'ticket.status_changed',
      });
      await comment(ticket.id, { body: 'A note.', ...fields });
      const after = await getTicket(ticket.id);
      expect(after.status).toBe(status);
      expect(after.status_history).toEqual(ticket.status_history);
      expect(after.resolved_at).toBe(ticket.resolved_at);
      expect(
        await listEvents(t, desk.token, { subject_id: ticket.id, type: 'ticket.status_changed' }),
      ).toEqual(statusEvents);
    });
  });

  describe("the agent's first reply", () => {
    it('should move a new ticket to open on a public agent comment (agent_replied)', async () => {
      const ticket = await ticketIn('new');
      const res = await postComment(t, desk.token, ticket.id, { body: 'On it.', public: true });
      expectSuccess(res, 201);
      const after = await getTicket(ticket.id);
      expect(after.status).toBe('open');
      expect(after.status_history.at(-1)).toEqual({
        from: 'new',
        to: 'open',
        reason: 'agent_replied',
        actor: { type: 'token', id: desk.tokenId },
        at: expect.stringMatching(ISO_MS),
      });
      const [event] = await listEvents(t, desk.token, {
        subject_id: ticket.id,
        type: 'ticket.status_changed',
      });
      expect(event.data).toMatchObject({ from: 'new', to: 'open', reason: 'agent_replied' });
      expect(event.data.object).toMatchObject({ id: ticket.id, status: 'open' });
    });

    it.each([
      ['an internal agent comment', { public: false }],
      ['an internal system comment', { public: false, author_type: 'system' }],
      ['a public system comment', { public: true, author_type: 'system' }],
    ])('should leave a new ticket new on %s', async (_label, fields) => {
      const ticket = await ticketIn('new');
      await comment(ticket.id, { body: 'A note.', ...fields });
      const after = await getTicket(ticket.id);
      expect(after.status).toBe('new');
      expect(after.status_history).toEqual(ticket.status_history);
    });

    it('should set first_response_at with the first public agent comment only, and never change it', async () => {
      const ticket = await ticketIn('new');
      expect(ticket.first_response_at).toBeNull();

      await comment(ticket.id, { body: 'internal', public: false });
      await comment(ticket.id, { body: 'internal system', public: false, author_type: 'system' });
      await comment(ticket.id, { body: 'public system', public: true, author_type: 'system' });
      await comment(ticket.id, { body: 'hello?', public: true, author_type: 'subscriber' });
      expect((await getTicket(ticket.id)).first_response_at).toBeNull();

      const first = await comment(ticket.id, { body: 'We are on it.', public: true, author: 'noc.jane' });
      const answered = await getTicket(ticket.id);
      expect(answered.first_response_at).toBe(first.created_at);

      await comment(ticket.id, { body: 'Technician booked.', public: true, author: 'noc.joe' });
      await comment(ticket.id, { body: 'internal again', public: false });
      expectSuccess(await postTicketStatus(t, desk.token, ticket.id, 'pending_customer'));
      await comment(ticket.id, { body: 'Fine', public: true, author_type: 'subscriber' });
      await comment(ticket.id, { body: 'A third reply.', public: true });
      expect((await getTicket(ticket.id)).first_response_at).toBe(first.created_at);
    });

    it('should set first_response_at on a ticket already open', async () => {
      const ticket = await ticketIn('open');
      expect(ticket.first_response_at).toBeNull();
      const reply = await comment(ticket.id, { body: 'Looking into it.', public: true });
      const after = await getTicket(ticket.id);
      expect(after.first_response_at).toBe(reply.created_at);
      expect(after.status).toBe('open');
      expect(after.status_history).toEqual(ticket.status_history);
    });
  });

  describe('comments on a final ticket', () => {
    it.each([
      ['closed', { public: true }],
      ['closed', { public: false }],
      ['closed', { public: true, author_type: 'subscriber' }],
      ['cancelled', { public: true }],
      ['cancelled', { public: false, author_type: 'system' }],
      ['cancelled', { public: true, author_type: 'subscriber' }],
    ] as const)('should answer 409 ticket_closed on a %s ticket (%j)', async (status, fields) => {
      const ticket = await ticketIn(status);
      const eventsBefore = await listEvents(t, desk.token, { subject_id: ticket.id });
      const res = await postComment(t, desk.token, ticket.id, { body: 'Too late.', ...fields });
      // The contract names no field for ticket_closed: null, or status (what makes the ticket closed), both read well.
      expect([null, 'status']).toContain(res.body.error?.field);
      expectError(res, 409, 'ticket_closed', res.body.error.field as string | null);
      expect(res.body.error.message).toMatch(new RegExp(status));
      expect(await allComments(ticket.id)).toEqual([]);
      expect(await getTicket(ticket.id)).toEqual(ticket);
      expect(await listEvents(t, desk.token, { subject_id: ticket.id })).toEqual(eventsBefore);
    });
  });

  describe('ticket.comment_added events', () => {
    it('should carry a public comment with its body, subject_id the ticket', async () => {
      const ticket = await ticketIn('open');
      const res = await postComment(t, desk.token, ticket.id, {
        body: 'Public words.',
        public: true,
        author: 'noc.jane',
      });
      expectSuccess(res, 201);
      const [event] = await listEvents(t, desk.token, {
        subject_id: ticket.id,
        type: 'ticket.comment_added',
      });
      expect(event).toMatchObject({
        type: 'ticket.comment_added',
        subject_id: ticket.id,
        request_id: res.body.meta.request_id,
        actor: { type: 'token', id: desk.tokenId },
      });
      expect(event.data).toEqual({ object: res.body.data });
    });

    it('should carry an internal comment with body null, and its body nowhere in the event log', async () => {
      const owner = await createTenantWithToken(t, TICKET_SCOPES);
      const ticket = await ticketIn('pending_customer', owner.token);
      const secret = secretText('internal: the customer was rude on the phone');
      const publicText = secretText('public: a technician comes at 2 pm');

      const internal = await comment(
        ticket.id,
        { body: secret, public: false, author: 'noc.jane' },
        owner.token,
      );
      expect(internal.body).toBe(secret);
      const visible = await comment(ticket.id, { body: publicText, public: true }, owner.token);
      const system = await comment(
        ticket.id,
        { body: `${secret} (system)`, public: false, author_type: 'system' },
        owner.token,
      );

      const events = await listEvents(t, owner.token, {
        subject_id: ticket.id,
        type: 'ticket.comment_added',
      });
      expect(events.map((event) => event.data.object)).toEqual([
        { ...system, body: null },
        visible,
        { ...internal, body: null },
      ]);
      for (const event of events) {
        expect(event.subject_id).toBe(ticket.id);
        expect(Object.keys(event.data)).toEqual(['object']);
      }

      const log: EventBody[] = [];
      let cursor: string | null = null;
      for (;;) {
        const res = await request(t.http)
          .get('/api/v1/events')
          .query({ limit: '100', ...(cursor === null ? {} : { starting_after: cursor }) })
          .set(bearer(owner.token));
        expectList(res);
        log.push(...(res.body.data as EventBody[]));
        if (!res.body.meta.pagination.has_more) {
          break;
        }
        cursor = res.body.meta.pagination.next_cursor as string;
      }
      expect(log.length).toBeGreaterThanOrEqual(6);
      const json = JSON.stringify(log);
      expect(json).toContain(publicText);
      expect(json).not.toContain(secret);
      expect(json).not.toContain(secret.split(' ').at(-1));
      // The comment list itself still shows it to the desk.
      expect((await allComments(ticket.id, owner.token)).map((row) => row.body)).toEqual([
        secret,
        publicText,
        `${secret} (system)`,
      ]);
    });
  });

  describe('webhooks', () => {
    it("should deliver ticket.* events without an internal comment's body", async () => {
      const owner = await createTenantWithToken(t, [...TICKET_SCOPES, 'webhooks:read', 'webhooks:write']);
      tenants.push(owner);
      const receiver = await WebhookReceiver.start();
      receivers.push(receiver);
      await createWebhook(t.http, owner.token, { url: receiver.url, events: ['ticket.*'] });

      const ticket = await ticketIn('new', owner.token);
      const secret = secretText('internal: suspected fraud, do not tell the customer');
      const publicText = secretText('public: we are on it');
      const internal = await comment(ticket.id, { body: secret, public: false }, owner.token);
      const visible = await comment(ticket.id, { body: publicText, public: true }, owner.token);

      const added = await receiver.waitForType('ticket.comment_added', 2);
      await receiver.waitForType('ticket.created', 1);
      await receiver.waitForType('ticket.status_changed', 1);

      const internalDelivery = added.find((req) => req.body?.data.object.id === internal.id);
      const publicDelivery = added.find((req) => req.body?.data.object.id === visible.id);
      expect(internalDelivery).toBeDefined();
      expect(publicDelivery).toBeDefined();
      expect(internalDelivery!.body!.data.object).toEqual({ ...internal, body: null });
      expect(internalDelivery!.rawBody).not.toContain(secret);
      expect(publicDelivery!.body!.data.object).toEqual(visible);
      expect(publicDelivery!.rawBody).toContain(publicText);
      for (const raw of receiver.rawBodies()) {
        expect(raw).not.toContain(secret);
      }
      const statusChange = (await receiver.waitForType('ticket.status_changed', 1))[0];
      expect(statusChange.body!.data).toMatchObject({ from: 'new', to: 'open', reason: 'agent_replied' });
    });
  });
});
