import request from 'supertest';
import { expectError, expectList, expectSuccess } from './support/envelope';
import { bearer } from './support/factories';
import { listEvents } from './support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from './support/test-app';
import {
  COMMENT_ID,
  createTicket,
  postComment,
  postTicketStatus,
  reasonFor,
  TICKET_SCOPES,
  TICKET_STATUSES,
  ticketIn,
  type Ticket,
  type TicketStatus,
} from './support/ticket-factory';

const HOUR = 3_600_000;

/** The workflow written out, independently of the service's table. */
const ALLOWED: Record<TicketStatus, TicketStatus[]> = {
  new: ['open', 'cancelled'],
  open: ['pending_customer', 'on_hold', 'resolved', 'cancelled'],
  pending_customer: ['open', 'resolved', 'cancelled'],
  on_hold: ['open', 'resolved', 'cancelled'],
  resolved: ['open', 'closed', 'cancelled'],
  closed: [],
  cancelled: [],
};

const PAIRS = TICKET_STATUSES.flatMap((from) =>
  TICKET_STATUSES.map((to) => ({ from, to, allowed: ALLOWED[from].includes(to) })),
);

/** Issue #14: the ticket workflow, comments and their effects, the SLA settings, and the events of each. */
describe('Tickets: workflow, comments, SLA', () => {
  let t: TestApp;
  let desk: TenantWithToken;

  const get = (path: string, token = desk.token) => request(t.http).get(`/api/v1/${path}`).set(bearer(token));
  const read = async (id: string) => (await get(`tickets/${id}`)).body.data as Ticket;

  beforeAll(async () => {
    t = await startTestApp();
    desk = await createTenantWithToken(t, TICKET_SCOPES);
  });

  afterAll(async () => {
    await t.close();
  });

  describe('POST /api/v1/tickets/{id}/status', () => {
    it('should cover all 49 pairs', () => {
      expect(PAIRS).toHaveLength(49);
      expect(PAIRS.filter((pair) => pair.allowed)).toHaveLength(15);
    });

    it.each(PAIRS)('$from → $to (allowed: $allowed)', async ({ from, to, allowed }) => {
      const ticket = await ticketIn(t, desk.token, from);
      const res = await postTicketStatus(t, desk.token, ticket.id, to, reasonFor(to));
      if (allowed) {
        expectSuccess(res);
        expect(res.body.data.status).toBe(to);
        expect(res.body.data.status_history.at(-1)).toMatchObject({
          from,
          to,
          reason: reasonFor(to) ?? null,
        });
        return;
      }
      expectError(res, 409, 'invalid_state_transition', 'status');
      expect(res.body.error.message).toContain(`from ${from} to ${to}`);
      expect((await read(ticket.id)).status).toBe(from);
    });

    it.each(['on_hold', 'cancelled'])('should require a reason for %s', async (to) => {
      const ticket = await ticketIn(t, desk.token, 'open');
      expectError(await postTicketStatus(t, desk.token, ticket.id, to), 400, 'missing_field', 'reason');
      expect((await read(ticket.id)).status).toBe('open');
    });

    it.each([
      [{ status: 'done' }, 422, 'validation_failed', 'status'],
      [{}, 400, 'missing_field', 'status'],
      [{ status: 'open', reason: 'r'.repeat(501) }, 422, 'validation_failed', 'reason'],
      [{ status: 'open', reason: 5 }, 422, 'validation_failed', 'reason'],
      [{ status: 'open', why: 'x' }, 400, 'unknown_field', 'why'],
    ])('should refuse %j', async (body, status, code, field) => {
      const ticket = await createTicket(t, desk.token);
      const res = await request(t.http)
        .post(`/api/v1/tickets/${ticket.id}/status`)
        .set(bearer(desk.token))
        .send(body);
      expectError(res, status, code, field);
    });

    it('should keep the history, resolved_at and closed_at, and emit ticket.status_changed for each move', async () => {
      const ticket = await createTicket(t, desk.token);
      const moves: [TicketStatus, string | undefined][] = [
        ['open', undefined],
        ['on_hold', 'Waiting for a part'],
        ['resolved', 'Part replaced'],
        ['open', 'Not fixed after all'],
        ['resolved', undefined],
        ['closed', undefined],
      ];
      for (const [to, reason] of moves) {
        const res = await postTicketStatus(t, desk.token, ticket.id, to, reason);
        expectSuccess(res);
        if (to === 'open') {
          expect(res.body.data.resolved_at).toBeNull();
        }
        if (to === 'resolved') {
          expect(res.body.data.resolved_at).toBe(res.body.data.updated_at);
        }
      }
      const final = await read(ticket.id);
      expect(final.closed_at).toBe(final.updated_at);
      expect(final.resolved_at).not.toBeNull();
      expect(final.status_history!.map(({ from, to, reason }) => [from, to, reason])).toEqual([
        [null, 'new', null],
        ['new', 'open', null],
        ['open', 'on_hold', 'Waiting for a part'],
        ['on_hold', 'resolved', 'Part replaced'],
        ['resolved', 'open', 'Not fixed after all'],
        ['open', 'resolved', null],
        ['resolved', 'closed', null],
      ]);
      for (const entry of final.status_history!) {
        expect(entry.actor).toEqual({ type: 'token', id: desk.tokenId });
      }
      const events = await listEvents(t, desk.token, {
        subject_id: ticket.id,
        type: 'ticket.status_changed',
      });
      expect(events.reverse().map((event) => [event.data.from, event.data.to, event.data.reason])).toEqual(
        final.status_history!.slice(1).map(({ from, to, reason }) => [from, to, reason]),
      );
      expect(events.at(-1)!.data.object).toMatchObject({ status: 'closed', closed_at: final.closed_at });
    });
  });

  describe('comments', () => {
    it('should add a comment and answer it', async () => {
      const ticket = await createTicket(t, desk.token);
      const res = await postComment(t, desk.token, ticket.id, {
        body: 'Checked the line: no sync.',
        public: false,
        author: ' noc.jane ',
      });
      expectSuccess(res, 201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(COMMENT_ID),
        ticket_id: ticket.id,
        body: 'Checked the line: no sync.',
        public: false,
        author: 'noc.jane',
        author_type: 'agent',
        created_at: expect.any(String),
      });
    });

    it.each([
      [{ public: true }, 400, 'missing_field', 'body'],
      [{ body: '', public: true }, 422, 'validation_failed', 'body'],
      [{ body: '  ', public: true }, 422, 'validation_failed', 'body'],
      [{ body: 'b'.repeat(10001), public: true }, 422, 'validation_failed', 'body'],
      [{ body: 7, public: true }, 422, 'validation_failed', 'body'],
      [{ body: 'x' }, 400, 'missing_field', 'public'],
      [{ body: 'x', public: 'yes' }, 422, 'validation_failed', 'public'],
      [{ body: 'x', public: true, author: 'a'.repeat(201) }, 422, 'validation_failed', 'author'],
      [{ body: 'x', public: true, author_type: 'bot' }, 422, 'validation_failed', 'author_type'],
      [{ body: 'x', public: false, author_type: 'subscriber' }, 422, 'validation_failed', 'public'],
      [{ body: 'x', public: true, mood: 'angry' }, 400, 'unknown_field', 'mood'],
    ])('should refuse %j', async (body, status, code, field) => {
      const ticket = await createTicket(t, desk.token);
      expectError(await postComment(t, desk.token, ticket.id, body), status, code, field);
    });

    it('should list comments oldest first across pages, and filter public and internal ones', async () => {
      const ticket = await ticketIn(t, desk.token, 'open');
      const sent: string[] = [];
      for (let index = 0; index < 7; index++) {
        const res = await postComment(t, desk.token, ticket.id, {
          body: `note ${index}`,
          public: index % 3 !== 0,
        });
        sent.push(res.body.data.id as string);
      }
      const walk = async (query: string) => {
        const ids: string[] = [];
        let cursor: string | null = null;
        do {
          const res = await get(
            `tickets/${ticket.id}/comments?limit=2${query}${cursor ? `&starting_after=${cursor}` : ''}`,
          );
          expectList(res);
          ids.push(...(res.body.data as { id: string }[]).map((comment) => comment.id));
          cursor = res.body.meta.pagination.next_cursor as string | null;
        } while (cursor);
        return ids;
      };
      expect(await walk('')).toEqual(sent);
      expect(await walk('&public=true')).toEqual(sent.filter((_, index) => index % 3 !== 0));
      expect(await walk('&public=false')).toEqual(sent.filter((_, index) => index % 3 === 0));
      expectError(await get(`tickets/${ticket.id}/comments?public=yes`), 400, 'invalid_query', 'public');
    });

    it.each(['pending_customer', 'resolved'] as const)(
      "should reopen a %s ticket on the subscriber's public reply",
      async (state) => {
        const ticket = await ticketIn(t, desk.token, state);
        expectSuccess(
          await postComment(t, desk.token, ticket.id, {
            body: 'Still down',
            public: true,
            author_type: 'subscriber',
          }),
          201,
        );
        const after = await read(ticket.id);
        expect(after.status).toBe('open');
        expect(after.resolved_at).toBeNull();
        expect(after.status_history!.at(-1)).toMatchObject({
          from: state,
          to: 'open',
          reason: 'customer_replied',
        });
        const [moved] = await listEvents(t, desk.token, {
          subject_id: ticket.id,
          type: 'ticket.status_changed',
        });
        expect(moved.data).toMatchObject({ from: state, to: 'open', reason: 'customer_replied' });
      },
    );

    it.each([
      ['an internal agent note', 'pending_customer', { public: false }],
      ["an agent's public reply", 'pending_customer', { public: true }],
      ['a system comment', 'resolved', { public: true, author_type: 'system' }],
      ["the subscriber's reply", 'open', { public: true, author_type: 'subscriber' }],
      ["the subscriber's reply", 'on_hold', { public: true, author_type: 'subscriber' }],
    ] as const)('should not move the ticket for %s on %s', async (_case, state, fields) => {
      const ticket = await ticketIn(t, desk.token, state);
      expectSuccess(await postComment(t, desk.token, ticket.id, { body: 'Note', ...fields }), 201);
      expect((await read(ticket.id)).status).toBe(state);
    });

    it("should open a new ticket on an agent's first public reply and keep that as first_response_at", async () => {
      const ticket = await createTicket(t, desk.token);
      await postComment(t, desk.token, ticket.id, { body: 'internal', public: false });
      await postComment(t, desk.token, ticket.id, { body: 'system', public: true, author_type: 'system' });
      await postComment(t, desk.token, ticket.id, {
        body: 'me too',
        public: true,
        author_type: 'subscriber',
      });
      let now = await read(ticket.id);
      expect(now.status).toBe('new');
      expect(now.first_response_at).toBeNull();
      const first = await postComment(t, desk.token, ticket.id, { body: 'On it', public: true });
      now = await read(ticket.id);
      expect(now.status).toBe('open');
      expect(now.first_response_at).toBe(first.body.data.created_at);
      expect(now.status_history!.at(-1)).toMatchObject({ from: 'new', to: 'open', reason: 'agent_replied' });
      await postComment(t, desk.token, ticket.id, { body: 'Update', public: true });
      expect((await read(ticket.id)).first_response_at).toBe(first.body.data.created_at);
    });

    it('should set first_response_at on an already open ticket without moving it', async () => {
      const ticket = await ticketIn(t, desk.token, 'open');
      const reply = await postComment(t, desk.token, ticket.id, { body: 'Looking', public: true });
      const now = await read(ticket.id);
      expect(now).toMatchObject({ status: 'open', first_response_at: reply.body.data.created_at });
    });

    it.each(['closed', 'cancelled'] as const)(
      'should answer 409 ticket_closed on a %s ticket',
      async (state) => {
        const ticket = await ticketIn(t, desk.token, state);
        expectError(
          await postComment(t, desk.token, ticket.id, {
            body: 'Hello?',
            public: true,
            author_type: 'subscriber',
          }),
          409,
          'ticket_closed',
          'status',
        );
      },
    );

    it('should emit ticket.comment_added, never carrying the body of an internal comment', async () => {
      const ticket = await createTicket(t, desk.token);
      const secret = 'Customer is on the fraud watch list 7f3a';
      const internal = await postComment(t, desk.token, ticket.id, { body: secret, public: false });
      const visible = await postComment(t, desk.token, ticket.id, { body: 'We are on it', public: true });
      const events = await listEvents(t, desk.token, { subject_id: ticket.id, type: 'ticket.comment_added' });
      expect(events.map((event) => event.data.object)).toEqual([
        { ...visible.body.data },
        { ...internal.body.data, body: null },
      ]);
      const everything = await listEvents(t, desk.token, {});
      expect(JSON.stringify(everything)).not.toContain(secret);
    });
  });

  describe('GET/PATCH /api/v1/ticket-settings', () => {
    it('should start from the defaults, merge a PATCH and apply it to tickets opened afterwards only', async () => {
      const tenant = await createTenantWithToken(t, TICKET_SCOPES);
      const settings = () => get('ticket-settings', tenant.token);
      const before = await settings();
      expectSuccess(before);
      expect(before.body.data).toEqual({
        due_hours: { urgent: 4, high: 24, normal: 72, low: 168 },
        updated_at: null,
      });
      const older = await createTicket(t, tenant.token, { priority: 'high' });

      const res = await request(t.http)
        .patch('/api/v1/ticket-settings')
        .set(bearer(tenant.token))
        .send({ due_hours: { high: 12, urgent: 1 } });
      expectSuccess(res);
      expect(res.body.data.due_hours).toEqual({ urgent: 1, high: 12, normal: 72, low: 168 });
      expect((await settings()).body.data).toEqual(res.body.data);

      const newer = await createTicket(t, tenant.token, { priority: 'high' });
      expect(Date.parse(newer.due_at) - Date.parse(newer.created_at)).toBe(12 * HOUR);
      const olderNow = (await get(`tickets/${older.id}`, tenant.token)).body.data as Ticket;
      expect(olderNow.due_at).toBe(older.due_at);
      const reprioritised = await request(t.http)
        .patch(`/api/v1/tickets/${older.id}`)
        .set(bearer(tenant.token))
        .send({ priority: 'urgent' });
      expect(Date.parse(reprioritised.body.data.due_at) - Date.parse(older.created_at)).toBe(1 * HOUR);

      const [event] = await listEvents(t, tenant.token, { type: 'ticket_settings.updated' });
      expect(event.data).toMatchObject({
        object: res.body.data,
        changed_fields: ['due_hours.high', 'due_hours.urgent'],
      });
      expect((await get('ticket-settings')).body.data.due_hours.high).toBe(24);
    });

    it.each([
      [{ due_hours: { high: 0 } }, 422, 'validation_failed', 'due_hours.high'],
      [{ due_hours: { low: 8761 } }, 422, 'validation_failed', 'due_hours.low'],
      [{ due_hours: { normal: 1.5 } }, 422, 'validation_failed', 'due_hours.normal'],
      [{ due_hours: { urgent: '2' } }, 422, 'validation_failed', 'due_hours.urgent'],
      [{ due_hours: { urgent: null } }, 400, 'missing_field', 'due_hours.urgent'],
      [{ due_hours: { critical: 1 } }, 400, 'unknown_field', 'due_hours.critical'],
      [{ due_hours: 12 }, 422, 'validation_failed', 'due_hours'],
      [{ sla: {} }, 400, 'unknown_field', 'sla'],
    ])('should refuse %j', async (body, status, code, field) => {
      const res = await request(t.http).patch('/api/v1/ticket-settings').set(bearer(desk.token)).send(body);
      expectError(res, status, code, field);
    });
  });
});
