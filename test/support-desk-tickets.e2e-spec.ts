import request from 'supertest';
import { expectError, expectReplayOf, expectSuccess } from './support/envelope';
import { bearer } from './support/factories';
import { createSubscriber, listEvents, listen } from './support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from './support/test-app';
import {
  createTicket,
  postTicket,
  TICKET_ID,
  TICKET_KEYS,
  TICKET_SCOPES,
  ticketIn,
  type Ticket,
} from './support/ticket-factory';

const HOUR = 3_600_000;

/** Issue #14: creating and editing tickets, numbering, isolation, scopes and idempotency. */
describe('Tickets: create, edit, isolation', () => {
  let t: TestApp;
  let desk: TenantWithToken;
  let subscriberId: string;

  const patch = (id: string, body: Record<string, unknown>, token = desk.token) =>
    request(t.http).patch(`/api/v1/tickets/${id}`).set(bearer(token)).send(body);

  beforeAll(async () => {
    t = await startTestApp();
    await listen(t);
    desk = await createTenantWithToken(t, TICKET_SCOPES);
    subscriberId = (await createSubscriber(t, desk.token)).id;
  });

  afterAll(async () => {
    await t.close();
  });

  describe('POST /api/v1/tickets', () => {
    it('should open a ticket with the defaults, its number, its SLA due time and its first history entry', async () => {
      const res = await postTicket(t, desk.token, { subject: '  No internet  ' });
      expectSuccess(res, 201);
      const ticket = res.body.data as Ticket;
      expect(Object.keys(ticket).sort()).toEqual([...TICKET_KEYS, 'status_history'].sort());
      expect(ticket).toMatchObject({
        subject: 'No internet',
        description: null,
        type: 'question',
        priority: 'normal',
        status: 'new',
        subscriber_id: null,
        assignee: null,
        tags: [],
        external_id: null,
        metadata: {},
        overdue: false,
        first_response_at: null,
        resolved_at: null,
        closed_at: null,
      });
      expect(ticket.id).toMatch(TICKET_ID);
      expect(Number.isInteger(ticket.number) && ticket.number >= 1).toBe(true);
      expect(Date.parse(ticket.due_at) - Date.parse(ticket.created_at)).toBe(72 * HOUR);
      expect(ticket.status_history).toEqual([
        {
          from: null,
          to: 'new',
          reason: null,
          actor: { type: 'token', id: desk.tokenId },
          at: ticket.created_at,
        },
      ]);
      const read = await request(t.http).get(`/api/v1/tickets/${ticket.id}`).set(bearer(desk.token));
      expectSuccess(read);
      expect(read.body.data).toEqual(ticket);
    });

    it.each([
      ['urgent', 4],
      ['high', 24],
      ['normal', 72],
      ['low', 168],
    ])('should make a %s ticket due %i hours after its creation', async (priority, hours) => {
      const ticket = await createTicket(t, desk.token, { priority });
      expect(Date.parse(ticket.due_at) - Date.parse(ticket.created_at)).toBe(hours * HOUR);
    });

    it('should keep every field sent, tags trimmed, lower-cased and each once', async () => {
      const ticket = await createTicket(t, desk.token, {
        subject: 'Slow speeds in the evening',
        description: '  kept verbatim\n',
        type: 'incident',
        priority: 'high',
        subscriber_id: subscriberId,
        assignee: ' noc.jane ',
        tags: ['Fiber', ' fiber', 'OUTAGE', 'street-14'],
        external_id: 'helpdesk-1',
        metadata: { channel: 'phone', callback: true },
      });
      expect(ticket).toMatchObject({
        description: '  kept verbatim\n',
        type: 'incident',
        priority: 'high',
        subscriber_id: subscriberId,
        assignee: 'noc.jane',
        tags: ['fiber', 'outage', 'street-14'],
        external_id: 'helpdesk-1',
        metadata: { channel: 'phone', callback: true },
      });
    });

    const tooMany = Array.from({ length: 21 }, (_, index) => `tag-${index}`);
    const fiftyOneKeys = Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, 1]));
    it.each([
      ['no subject', { subject: undefined }, 400, 'missing_field', 'subject'],
      ['a null subject', { subject: null }, 400, 'missing_field', 'subject'],
      ['an empty subject', { subject: '' }, 422, 'validation_failed', 'subject'],
      ['a blank subject', { subject: '   ' }, 422, 'validation_failed', 'subject'],
      ['a subject of 201 characters', { subject: 'a'.repeat(201) }, 422, 'validation_failed', 'subject'],
      ['a numeric subject', { subject: 42 }, 422, 'validation_failed', 'subject'],
      [
        'a description of 20,001',
        { description: 'd'.repeat(20001) },
        422,
        'validation_failed',
        'description',
      ],
      ['a description object', { description: {} }, 422, 'validation_failed', 'description'],
      ['an unknown type', { type: 'rant' }, 422, 'validation_failed', 'type'],
      ['a null type', { type: null }, 400, 'missing_field', 'type'],
      ['an unknown priority', { priority: 'critical' }, 422, 'validation_failed', 'priority'],
      ['a numeric priority', { priority: 1 }, 422, 'validation_failed', 'priority'],
      ['an unknown subscriber', { subscriber_id: 'sub_nope' }, 422, 'invalid_reference', 'subscriber_id'],
      ['a numeric subscriber_id', { subscriber_id: 7 }, 422, 'validation_failed', 'subscriber_id'],
      ['an assignee of 201', { assignee: 'a'.repeat(201) }, 422, 'validation_failed', 'assignee'],
      ['tags not an array', { tags: 'fiber' }, 422, 'validation_failed', 'tags'],
      ['21 tags', { tags: tooMany }, 422, 'validation_failed', 'tags'],
      ['a tag of 51', { tags: ['ok', 'x'.repeat(51)] }, 422, 'validation_failed', 'tags.1'],
      ['an empty tag', { tags: ['ok', 'fine', ' '] }, 422, 'validation_failed', 'tags.2'],
      ['a numeric tag', { tags: [3] }, 422, 'validation_failed', 'tags.0'],
      ['an external_id of 201', { external_id: 'e'.repeat(201) }, 422, 'validation_failed', 'external_id'],
      ['metadata an array', { metadata: [] }, 422, 'validation_failed', 'metadata'],
      ['a nested metadata value', { metadata: { a: { b: 1 } } }, 422, 'validation_failed', 'metadata.a'],
      ['51 metadata keys', { metadata: fiftyOneKeys }, 422, 'validation_failed', 'metadata'],
      ['a status', { status: 'open' }, 400, 'unknown_field', 'status'],
      ['a number', { number: 5 }, 400, 'unknown_field', 'number'],
      ['an unknown field', { colour: 'red' }, 400, 'unknown_field', 'colour'],
    ])('should refuse %s', async (_case, fields, status, code, field) => {
      const body = { subject: 'Refused', ...fields };
      const res = await postTicket(t, desk.token, body);
      expectError(res, status, code, field);
    });

    it('should refuse a duplicate external_id with 409 duplicate_ticket, but not in another tenant', async () => {
      await createTicket(t, desk.token, { external_id: 'helpdesk-dup' });
      expectError(
        await postTicket(t, desk.token, { subject: 'Again', external_id: 'helpdesk-dup' }),
        409,
        'duplicate_ticket',
        'external_id',
      );
      const other = await createTenantWithToken(t, TICKET_SCOPES);
      expect((await createTicket(t, other.token, { external_id: 'helpdesk-dup' })).external_id).toBe(
        'helpdesk-dup',
      );
    });

    it('should number 50 parallel creates 1 to 50 in a fresh tenant, without gaps, even with failures among them', async () => {
      const fresh = await createTenantWithToken(t, TICKET_SCOPES);
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, index) =>
          postTicket(
            t,
            fresh.token,
            // Every sixth one names an unknown subscriber and fails after taking a number: it must give it back.
            index % 6 === 5
              ? { subject: `Call ${index}`, subscriber_id: 'sub_unknown' }
              : { subject: `Call ${index}` },
          ),
        ),
      );
      expect(answers.filter((res) => res.status === 422)).toHaveLength(10);
      const numbers = answers
        .filter((res) => res.status === 201)
        .map((res) => res.body.data.number as number);
      expect(numbers.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, index) => index + 1));
      expect((await createTicket(t, fresh.token)).number).toBe(51);
    });
  });

  describe('PATCH /api/v1/tickets/{id}', () => {
    it('should change each editable field and report the changed ones in ticket.updated', async () => {
      const ticket = await createTicket(t, desk.token, {
        description: 'first',
        assignee: 'noc.jane',
        tags: ['a'],
        metadata: { keep: 1, drop: 2 },
      });
      const res = await patch(ticket.id, {
        subject: 'Renamed',
        description: null,
        type: 'billing',
        assignee: null,
        tags: ['B', 'b', 'c'],
        metadata: { drop: null, add: 'x' },
      });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        subject: 'Renamed',
        description: null,
        type: 'billing',
        assignee: null,
        tags: ['b', 'c'],
        metadata: { keep: 1, add: 'x' },
        due_at: ticket.due_at,
      });
      expect(res.body.data.status_history).toHaveLength(1);
      const [updated] = await listEvents(t, desk.token, { subject_id: ticket.id, type: 'ticket.updated' });
      expect(updated.data.changed_fields).toEqual([
        'subject',
        'description',
        'type',
        'assignee',
        'tags',
        'metadata',
      ]);
      expect(updated.data.object).toMatchObject({ subject: 'Renamed', tags: ['b', 'c'] });
      expect(updated.actor).toEqual({ type: 'token', id: desk.tokenId });
      const cleared = await patch(ticket.id, { metadata: null });
      expect(cleared.body.data.metadata).toEqual({});
    });

    it('should recompute due_at from created_at when the priority changes', async () => {
      const ticket = await createTicket(t, desk.token, { priority: 'low' });
      const res = await patch(ticket.id, { priority: 'urgent' });
      expectSuccess(res);
      expect(Date.parse(res.body.data.due_at) - Date.parse(ticket.created_at)).toBe(4 * HOUR);
    });

    it('should write nothing for a PATCH that changes nothing', async () => {
      const ticket = await createTicket(t, desk.token, { tags: ['x'] });
      const res = await patch(ticket.id, { subject: ticket.subject, tags: ['X'] });
      expectSuccess(res);
      expect(res.body.data.updated_at).toBe(ticket.updated_at);
      expect(await listEvents(t, desk.token, { subject_id: ticket.id, type: 'ticket.updated' })).toEqual([]);
    });

    it.each([
      [{ status: 'open' }, 400, 'unknown_field', 'status'],
      [{ subscriber_id: 'sub_x' }, 400, 'unknown_field', 'subscriber_id'],
      [{ subject: null }, 400, 'missing_field', 'subject'],
      [{ subject: '' }, 422, 'validation_failed', 'subject'],
      [{ priority: 'asap' }, 422, 'validation_failed', 'priority'],
      [{ type: null }, 400, 'missing_field', 'type'],
      [{ tags: null }, 400, 'missing_field', 'tags'],
      [{ tags: ['ok', 5] }, 422, 'validation_failed', 'tags.1'],
      [{ metadata: { a: [] } }, 422, 'validation_failed', 'metadata.a'],
    ])('should refuse %j', async (body, status, code, field) => {
      const ticket = await createTicket(t, desk.token);
      expectError(await patch(ticket.id, body), status, code, field);
    });

    it.each(['closed', 'cancelled'] as const)(
      'should answer 409 ticket_closed on a %s ticket',
      async (state) => {
        const ticket = await ticketIn(t, desk.token, state);
        expectError(await patch(ticket.id, { subject: 'Too late' }), 409, 'ticket_closed', 'status');
      },
    );

    it('should answer 404 for an unknown ticket', async () => {
      expectError(await patch('tkt_unknown', { subject: 'x' }), 404, 'not_found');
    });
  });

  describe('tenant isolation', () => {
    it("should answer 404 for another tenant's ticket on every route and refuse its subscriber", async () => {
      const other = await createTenantWithToken(t, TICKET_SCOPES);
      const theirs = await createTicket(t, other.token);
      const theirSubscriber = await createSubscriber(t, other.token);
      const api = (method: 'get' | 'post' | 'patch', path: string) =>
        request(t.http)[method](`/api/v1/${path}`).set(bearer(desk.token));
      expectError(await api('get', `tickets/${theirs.id}`), 404, 'not_found');
      expectError(await api('patch', `tickets/${theirs.id}`).send({ subject: 'x' }), 404, 'not_found');
      expectError(
        await api('post', `tickets/${theirs.id}/status`).send({ status: 'open' }),
        404,
        'not_found',
      );
      expectError(
        await api('post', `tickets/${theirs.id}/comments`).send({ body: 'hi', public: true }),
        404,
        'not_found',
      );
      expectError(await api('get', `tickets/${theirs.id}/comments`), 404, 'not_found');
      expectError(await api('get', `subscribers/${theirSubscriber.id}/tickets`), 404, 'not_found');
      expectError(
        await postTicket(t, desk.token, { subject: 'x', subscriber_id: theirSubscriber.id }),
        422,
        'invalid_reference',
        'subscriber_id',
      );
      const list = await api('get', 'tickets?limit=100');
      expect((list.body.data as Ticket[]).some((ticket) => ticket.id === theirs.id)).toBe(false);
      const unchanged = await request(t.http).get(`/api/v1/tickets/${theirs.id}`).set(bearer(other.token));
      expect(unchanged.body.data.status_history).toHaveLength(1);
    });
  });

  describe('scopes', () => {
    it('should refuse writes without tickets:write and reads without tickets:read', async () => {
      const ticket = await createTicket(t, desk.token);
      const reader = await createTenantWithToken(t, ['tickets:read']);
      const mine = await createTicket(t, (await createTenantWithToken(t, ['tickets:*'])).token);
      expect(mine.status).toBe('new');
      const none = await createTenantWithToken(t, ['subscribers:read', 'subscribers:write']);
      const as = (token: string, method: 'get' | 'post' | 'patch', path: string, body?: object) =>
        request(t.http)[method](`/api/v1/${path}`).set(bearer(token)).send(body);
      for (const [method, path, body] of [
        ['post', 'tickets', { subject: 'x' }],
        ['patch', `tickets/${ticket.id}`, { subject: 'x' }],
        ['post', `tickets/${ticket.id}/status`, { status: 'open' }],
        ['post', `tickets/${ticket.id}/comments`, { body: 'x', public: true }],
        ['patch', 'ticket-settings', { due_hours: { low: 100 } }],
      ] as const) {
        expectError(await as(reader.token, method, path, body), 403, 'insufficient_scope');
      }
      for (const path of [
        'tickets',
        `tickets/${ticket.id}`,
        `tickets/${ticket.id}/comments`,
        `subscribers/${subscriberId}/tickets`,
        'ticket-settings',
      ]) {
        expectError(await as(none.token, 'get', path), 403, 'insufficient_scope');
      }
      const admin = await createTenantWithToken(t, ['admin']);
      expectSuccess(await as(admin.token, 'post', 'tickets', { subject: 'As admin' }), 201);
    });
  });

  describe('idempotency', () => {
    it('should create one ticket and one number for a key sent twice, and replay the first answer', async () => {
      const fresh = await createTenantWithToken(t, TICKET_SCOPES);
      const key = { 'X-Idempotency-Key': 'call-0001' };
      const first = await postTicket(t, fresh.token, { subject: 'Keyed' }, key);
      expectSuccess(first, 201);
      const replay = await postTicket(t, fresh.token, { subject: 'Keyed' }, key);
      expectReplayOf(replay, first);
      expect((await createTicket(t, fresh.token)).number).toBe(2);
    });

    it('should replay keyed status moves and comments without applying them twice', async () => {
      const ticket = await createTicket(t, desk.token);
      const move = () =>
        request(t.http)
          .post(`/api/v1/tickets/${ticket.id}/status`)
          .set(bearer(desk.token))
          .set('X-Idempotency-Key', `move-${ticket.id}`)
          .send({ status: 'open' });
      const first = await move();
      expectSuccess(first);
      expectReplayOf(await move(), first);
      const comment = () =>
        request(t.http)
          .post(`/api/v1/tickets/${ticket.id}/comments`)
          .set(bearer(desk.token))
          .set('X-Idempotency-Key', `comment-${ticket.id}`)
          .send({ body: 'Once', public: true });
      const added = await comment();
      expectSuccess(added, 201);
      expectReplayOf(await comment(), added);
      const comments = await request(t.http)
        .get(`/api/v1/tickets/${ticket.id}/comments`)
        .set(bearer(desk.token));
      expect(comments.body.data).toHaveLength(1);
      const read = await request(t.http).get(`/api/v1/tickets/${ticket.id}`).set(bearer(desk.token));
      expect(read.body.data.status_history.map((entry: { to: string }) => entry.to)).toEqual(['new', 'open']);
    });
  });

  describe('events', () => {
    it('should write ticket.created in the same transaction, with the ticket as data.object', async () => {
      const ticket = await createTicket(t, desk.token, { subscriber_id: subscriberId });
      const [created] = await listEvents(t, desk.token, { subject_id: ticket.id });
      expect(created.type).toBe('ticket.created');
      const listed: Partial<Ticket> = { ...ticket };
      delete listed.status_history;
      expect(created.data.object).toEqual(listed);
      expect(created.actor).toEqual({ type: 'token', id: desk.tokenId });
    });
  });
});
