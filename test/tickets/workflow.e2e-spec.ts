import request from 'supertest';
import { expectError, expectSuccess, expectNotFound } from '../support/envelope';
import { bearer } from '../support/factories';
import { type EventBody, listEvents } from '../support/subscriber-factory';
import {
  createTenantWithToken,
  startTestApp,
  type TenantWithToken,
  type TestApp,
  issueToken,
} from '../support/test-app';
import {
  createTicket,
  postTicketStatus,
  TICKET_ID,
  TICKET_SCOPES,
  type Ticket,
} from '../support/ticket-factory';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const STATUSES = ['new', 'open', 'pending_customer', 'on_hold', 'resolved', 'closed', 'cancelled'] as const;
type Status = (typeof STATUSES)[number];

/** The workflow of the contract, written out here: every pair not listed is refused (X→X included). */
const ALLOWED: Record<Status, readonly Status[]> = {
  new: ['open', 'cancelled'],
  open: ['pending_customer', 'on_hold', 'resolved', 'cancelled'],
  pending_customer: ['open', 'resolved', 'cancelled'],
  on_hold: ['open', 'resolved', 'cancelled'],
  resolved: ['open', 'closed', 'cancelled'],
  closed: [],
  cancelled: [],
};

const PAIRS = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as const));
const ALLOWED_PAIRS = PAIRS.filter(([from, to]) => ALLOWED[from].includes(to));
const REFUSED_PAIRS = PAIRS.filter(([from, to]) => !ALLOWED[from].includes(to));

/** Moves that must say why. */
const NEEDS_REASON: readonly Status[] = ['on_hold', 'cancelled'];

/** The reason a test sends with a move: one for the moves that need it, none for the others. */
function reasonFor(to: Status): string | undefined {
  return NEEDS_REASON.includes(to) ? `because of ${to}` : undefined;
}

/** The shortest chain of allowed moves from `new` to each state, found from the ALLOWED table itself. */
const PATH: Record<Status, Status[]> = (() => {
  const paths: Partial<Record<Status, Status[]>> = { new: [] };
  const queue: Status[] = ['new'];
  while (queue.length > 0) {
    const from = queue.shift()!;
    for (const to of ALLOWED[from]) {
      if (paths[to] === undefined) {
        paths[to] = [...paths[from]!, to];
        queue.push(to);
      }
    }
  }
  return paths as Record<Status, Status[]>;
})();

/** The \b of a regular expression, with `_` counted as part of a word (on_hold, pending_customer). */
const word = (status: string) => `(?<![a-z_])${status}(?![a-z_])`;

type Ticketed = Ticket & { status_history: NonNullable<Ticket['status_history']> };

describe('Tickets: status workflow', () => {
  let t: TestApp;
  let desk: TenantWithToken;

  beforeAll(async () => {
    t = await startTestApp();
    desk = await createTenantWithToken(t, TICKET_SCOPES);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function getTicket(id: string, token = desk.token): Promise<Ticketed> {
    const res = await request(t.http).get(`/api/v1/tickets/${id}`).set(bearer(token));
    expectSuccess(res);
    return res.body.data as Ticketed;
  }

  async function move(id: string, to: Status, reason = reasonFor(to), token = desk.token): Promise<Ticketed> {
    const res = await postTicketStatus(t, token, id, to, reason);
    expectSuccess(res);
    return res.body.data as Ticketed;
  }

  /** A fresh ticket driven to `status` through the allowed moves of PATH. */
  async function ticketIn(status: Status, token = desk.token): Promise<Ticketed> {
    let ticket = (await createTicket(t, token)) as Ticketed;
    for (const to of PATH[status]) {
      ticket = await move(ticket.id, to, reasonFor(to), token);
    }
    expect(ticket.status).toBe(status);
    return ticket;
  }

  function statusEvents(token: string, id: string): Promise<EventBody[]> {
    return listEvents(t, token, { subject_id: id, type: 'ticket.status_changed' });
  }

  const withoutHistory = (ticket: Ticketed): Ticket => {
    const rest: Partial<Ticketed> = { ...ticket };
    delete rest.status_history;
    return rest as Ticket;
  };

  describe('the table', () => {
    it('should hold 49 pairs, 15 of them allowed, and reach every state from new', () => {
      expect(PAIRS).toHaveLength(49);
      expect(ALLOWED_PAIRS).toHaveLength(15);
      expect(REFUSED_PAIRS).toHaveLength(34);
      expect(Object.keys(PATH).sort()).toEqual([...STATUSES].sort());
    });
  });

  describe('POST /api/v1/tickets/{id}/status: every pair', () => {
    it.each(ALLOWED_PAIRS)('should allow %s → %s with 200 and the new status', async (from, to) => {
      const ticket = await ticketIn(from);
      const before = await getTicket(ticket.id);
      const res = await postTicketStatus(t, desk.token, ticket.id, to, reasonFor(to));
      expectSuccess(res);
      const moved = res.body.data as Ticketed;
      expect(moved).toMatchObject({ id: ticket.id, number: ticket.number, status: to });
      expect(moved.id).toMatch(TICKET_ID);
      expect(moved.status_history).toHaveLength(before.status_history.length + 1);
      expect(moved.status_history.slice(0, -1)).toEqual(before.status_history);
      expect(moved.status_history.at(-1)).toEqual({
        from,
        to,
        reason: reasonFor(to) ?? null,
        actor: { type: 'token', id: desk.tokenId },
        at: moved.updated_at,
      });
      expect(await getTicket(ticket.id)).toEqual(moved);

      const [event] = await statusEvents(desk.token, ticket.id);
      expect(event.data).toEqual({ object: withoutHistory(moved), from, to, reason: reasonFor(to) ?? null });
      expect(event.request_id).toBe(res.body.meta.request_id);
    });

    it.each(REFUSED_PAIRS)(
      'should refuse %s → %s with 409 invalid_state_transition naming both states',
      async (from, to) => {
        const ticket = await ticketIn(from);
        const before = await getTicket(ticket.id);
        const eventsBefore = await listEvents(t, desk.token, { subject_id: ticket.id });
        const res = await postTicketStatus(t, desk.token, ticket.id, to, reasonFor(to));
        expectError(res, 409, 'invalid_state_transition', 'status');
        expect(res.body.error.message).toMatch(new RegExp(`${word(from)}[\\s\\S]*${word(to)}`));
        expect(await getTicket(ticket.id)).toEqual(before);
        expect(await listEvents(t, desk.token, { subject_id: ticket.id })).toEqual(eventsBefore);
      },
    );
  });

  describe('POST /api/v1/tickets/{id}/status: reasons', () => {
    it.each([
      ['open', 'on_hold'],
      ['new', 'cancelled'],
      ['open', 'cancelled'],
      ['pending_customer', 'cancelled'],
      ['on_hold', 'cancelled'],
      ['resolved', 'cancelled'],
    ] as const)('should answer 400 missing_field reason for %s → %s without one', async (from, to) => {
      const ticket = await ticketIn(from);
      const before = await getTicket(ticket.id);
      expectError(await postTicketStatus(t, desk.token, ticket.id, to), 400, 'missing_field', 'reason');
      expect(await getTicket(ticket.id)).toEqual(before);
      expect(await statusEvents(desk.token, ticket.id)).toHaveLength(PATH[from].length);
    });

    it.each(['on_hold', 'cancelled'] as const)(
      'should answer 422 validation_failed reason for → %s with reason null (an optional field is never null)',
      async (to) => {
        const ticket = await ticketIn('open');
        const res = await request(t.http)
          .post(`/api/v1/tickets/${ticket.id}/status`)
          .set(bearer(desk.token))
          .send({ status: to, reason: null });
        expectError(res, 422, 'validation_failed', 'reason');
        expect((await getTicket(ticket.id)).status).toBe('open');
      },
    );

    it.each(['on_hold', 'cancelled'] as const)(
      'should take a reason of exactly 500 characters for → %s and keep it',
      async (to) => {
        const ticket = await ticketIn('open');
        const reason = 'r'.repeat(500);
        const moved = await move(ticket.id, to, reason);
        expect(moved.status).toBe(to);
        expect(moved.status_history.at(-1)!.reason).toBe(reason);
      },
    );

    it.each(['on_hold', 'cancelled', 'resolved'] as const)(
      'should answer 422 validation_failed reason for a reason of 501 characters (→ %s)',
      async (to) => {
        const ticket = await ticketIn('open');
        const res = await postTicketStatus(t, desk.token, ticket.id, to, 'r'.repeat(501));
        expectError(res, 422, 'validation_failed', 'reason');
        expect((await getTicket(ticket.id)).status).toBe('open');
        expect(await statusEvents(desk.token, ticket.id)).toHaveLength(1);
      },
    );

    it.each([
      ['a number', 42],
      ['a boolean', true],
      ['an array', ['waiting for parts']],
      ['an object', { text: 'waiting for parts' }],
      ['an empty string', ''],
    ])('should answer 422 validation_failed reason for %s', async (_label, reason) => {
      const ticket = await ticketIn('open');
      const res = await request(t.http)
        .post(`/api/v1/tickets/${ticket.id}/status`)
        .set(bearer(desk.token))
        .send({ status: 'on_hold', reason });
      expectError(res, 422, 'validation_failed', 'reason');
      expect((await getTicket(ticket.id)).status).toBe('open');
    });

    it('should keep an optional reason given with a move that needs none', async () => {
      const ticket = await ticketIn('open');
      const moved = await move(ticket.id, 'resolved', 'replaced the ONT');
      expect(moved.status_history.at(-1)).toMatchObject({
        from: 'open',
        to: 'resolved',
        reason: 'replaced the ONT',
      });
      const [event] = await statusEvents(desk.token, ticket.id);
      expect(event.data).toMatchObject({ from: 'open', to: 'resolved', reason: 'replaced the ONT' });
    });
  });

  describe('POST /api/v1/tickets/{id}/status: malformed requests', () => {
    it.each(['reopened', 'OPEN', 'Open', 'closed ', 'archived', ''])(
      'should answer 422 validation_failed status for the unknown status %p',
      async (status) => {
        const ticket = await ticketIn('open');
        const before = await getTicket(ticket.id);
        const res = await postTicketStatus(t, desk.token, ticket.id, status);
        expectError(res, 422, 'validation_failed', 'status');
        expect(await getTicket(ticket.id)).toEqual(before);
      },
    );

    it.each([
      ['a number', 1],
      ['a boolean', true],
      ['an array', ['open']],
    ])('should answer 422 validation_failed status for %s', async (_label, status) => {
      const ticket = await ticketIn('new');
      const res = await request(t.http)
        .post(`/api/v1/tickets/${ticket.id}/status`)
        .set(bearer(desk.token))
        .send({ status });
      expectError(res, 422, 'validation_failed', 'status');
      expect((await getTicket(ticket.id)).status).toBe('new');
    });

    it.each([
      ['absent', {}],
      ['null', { status: null }],
    ])('should answer 400 missing_field status when status is %s', async (_label, body) => {
      const ticket = await ticketIn('new');
      const res = await request(t.http)
        .post(`/api/v1/tickets/${ticket.id}/status`)
        .set(bearer(desk.token))
        .send(body);
      expectError(res, 400, 'missing_field', 'status');
      expect((await getTicket(ticket.id)).status).toBe('new');
    });

    it('should answer 400 unknown_field for a field besides status and reason', async () => {
      const ticket = await ticketIn('new');
      const res = await request(t.http)
        .post(`/api/v1/tickets/${ticket.id}/status`)
        .set(bearer(desk.token))
        .send({ status: 'open', note: 'called the customer' });
      expectError(res, 400, 'unknown_field', 'note');
      expect((await getTicket(ticket.id)).status).toBe('new');
    });

    it("should answer 404 not_found for an unknown ticket and for another tenant's", async () => {
      const other = await createTenantWithToken(t, TICKET_SCOPES);
      const theirs = await createTicket(t, other.token);
      expectNotFound(await postTicketStatus(t, desk.token, theirs.id, 'open'));
      expectNotFound(await postTicketStatus(t, desk.token, 'tkt_00000000000000000000000000', 'open'));
      expect((await getTicket(theirs.id, other.token)).status).toBe('new');
    });
  });

  describe('status_history', () => {
    it('should start with {from: null, to: new} by the creating token, on create and on GET', async () => {
      const created = await createTicket(t, desk.token);
      const expected = [
        {
          from: null,
          to: 'new',
          reason: null,
          actor: { type: 'token', id: desk.tokenId },
          at: created.created_at,
        },
      ];
      expect(created.status_history).toEqual(expected);
      expect((await getTicket(created.id)).status_history).toEqual(expected);
    });

    it('should record every move in order with from, to, reason, actor and at, as GET shows it', async () => {
      const ticket = await createTicket(t, desk.token);
      const walk: [Status, string | undefined][] = [
        ['open', undefined],
        ['pending_customer', 'asked for the ONT serial'],
        ['open', undefined],
        ['on_hold', 'waiting for a technician slot'],
        ['resolved', 'technician replaced the drop cable'],
        ['open', 'customer says it fails again'],
        ['resolved', undefined],
        ['closed', undefined],
      ];
      const answers: Ticketed[] = [];
      for (const [to, reason] of walk) {
        answers.push(await move(ticket.id, to, reason));
      }
      const actor = { type: 'token', id: desk.tokenId };
      const expected = [
        { from: null, to: 'new', reason: null, actor, at: ticket.created_at },
        ...walk.map(([to, reason], i) => ({
          from: i === 0 ? 'new' : walk[i - 1][0],
          to,
          reason: reason ?? null,
          actor,
          at: answers[i].updated_at,
        })),
      ];
      const final = await getTicket(ticket.id);
      expect(final.status_history).toEqual(expected);
      expect(final).toEqual(answers.at(-1));
      for (const [i, answer] of answers.entries()) {
        expect(answer.status_history).toEqual(expected.slice(0, i + 2));
      }
      const times = final.status_history.map((entry) => entry.at);
      for (const at of times) {
        expect(at).toMatch(ISO_MS);
      }
      expect([...times].sort()).toEqual(times);
    });

    it('should name the token that made each move as its actor', async () => {
      const second = await issueToken(t, desk.tenantId, TICKET_SCOPES, 'second desk token');
      expect(second.id).not.toBe(desk.tokenId);
      const ticket = await createTicket(t, desk.token);
      await move(ticket.id, 'open', undefined, second.token);
      const held = await move(ticket.id, 'on_hold', 'parts ordered');
      expect(held.status_history.map((entry) => entry.actor)).toEqual([
        { type: 'token', id: desk.tokenId },
        { type: 'token', id: second.id },
        { type: 'token', id: desk.tokenId },
      ]);
      expect((await getTicket(ticket.id, second.token)).status_history).toEqual(held.status_history);
    });

    it('should carry no status_history in list items', async () => {
      const ticket = await ticketIn('open');
      const res = await request(t.http)
        .get('/api/v1/tickets')
        .query({ limit: '100' })
        .set(bearer(desk.token));
      expect(res.status).toBe(200);
      const item = (res.body.data as Record<string, unknown>[]).find((row) => row.id === ticket.id);
      expect(item).toBeDefined();
      expect(item).not.toHaveProperty('status_history');
    });
  });

  describe('resolved_at and closed_at', () => {
    it('should be null on a new ticket', async () => {
      const ticket = await createTicket(t, desk.token);
      expect(ticket).toMatchObject({ resolved_at: null, closed_at: null });
    });

    it('should set resolved_at on resolve, clear it on reopen, set it again on a second resolve', async () => {
      const ticket = await ticketIn('open');
      expect(ticket.resolved_at).toBeNull();

      const startedAt = Date.now();
      const resolved = await move(ticket.id, 'resolved');
      expect(resolved.resolved_at).toMatch(ISO_MS);
      expect(resolved.resolved_at).toBe(resolved.status_history.at(-1)!.at);
      expect(Date.parse(resolved.resolved_at!)).toBeGreaterThanOrEqual(startedAt - 1000);
      expect(Date.parse(resolved.resolved_at!)).toBeLessThanOrEqual(Date.now() + 1000);
      expect(resolved.closed_at).toBeNull();
      expect((await getTicket(ticket.id)).resolved_at).toBe(resolved.resolved_at);

      const reopened = await move(ticket.id, 'open');
      expect(reopened.resolved_at).toBeNull();
      expect((await getTicket(ticket.id)).resolved_at).toBeNull();

      const again = await move(ticket.id, 'resolved');
      expect(again.resolved_at).toBe(again.status_history.at(-1)!.at);
      expect(Date.parse(again.resolved_at!)).toBeGreaterThanOrEqual(Date.parse(resolved.resolved_at!));
    });

    it('should keep resolved_at null through moves that do not resolve', async () => {
      const ticket = await ticketIn('open');
      for (const [to, reason] of [
        ['pending_customer', undefined],
        ['open', undefined],
        ['on_hold', 'waiting'],
        ['open', undefined],
      ] as const) {
        const moved = await move(ticket.id, to, reason);
        expect({ status: moved.status, resolved_at: moved.resolved_at, closed_at: moved.closed_at }).toEqual({
          status: to,
          resolved_at: null,
          closed_at: null,
        });
      }
    });

    it('should set closed_at on close and keep resolved_at', async () => {
      const ticket = await ticketIn('resolved');
      const resolvedAt = (await getTicket(ticket.id)).resolved_at;
      expect(resolvedAt).toMatch(ISO_MS);
      const closed = await move(ticket.id, 'closed');
      expect(closed.closed_at).toMatch(ISO_MS);
      expect(closed.closed_at).toBe(closed.status_history.at(-1)!.at);
      expect(Date.parse(closed.closed_at!)).toBeGreaterThanOrEqual(Date.parse(resolvedAt!));
      expect(closed.resolved_at).toBe(resolvedAt);
      expect(await getTicket(ticket.id)).toMatchObject({
        status: 'closed',
        closed_at: closed.closed_at,
        resolved_at: resolvedAt,
      });
    });

    it('should leave closed_at null on a cancelled ticket', async () => {
      const ticket = await ticketIn('open');
      const cancelled = await move(ticket.id, 'cancelled', 'duplicate of another ticket');
      expect(cancelled).toMatchObject({ status: 'cancelled', closed_at: null, resolved_at: null });
    });
  });

  describe('final states', () => {
    it.each(['closed', 'cancelled'] as const)(
      'should refuse every status, reason or not, on a %s ticket and change nothing',
      async (final) => {
        const ticket = await ticketIn(final);
        const before = await getTicket(ticket.id);
        const eventsBefore = await listEvents(t, desk.token, { subject_id: ticket.id });
        for (const to of STATUSES) {
          for (const reason of [undefined, 'trying anyway']) {
            if (reason === undefined && NEEDS_REASON.includes(to)) {
              continue;
            }
            const res = await postTicketStatus(t, desk.token, ticket.id, to, reason);
            expectError(res, 409, 'invalid_state_transition', 'status');
            expect(res.body.error.message).toMatch(new RegExp(word(final)));
          }
        }
        expect(await getTicket(ticket.id)).toEqual(before);
        expect(await listEvents(t, desk.token, { subject_id: ticket.id })).toEqual(eventsBefore);
      },
    );
  });

  describe('ticket.status_changed events', () => {
    it('should write one per move, newest first, with from, to, reason and the ticket', async () => {
      const owner = await createTenantWithToken(t, TICKET_SCOPES);
      const ticket = await createTicket(t, owner.token);
      const walk: [Status, string | undefined][] = [
        ['open', undefined],
        ['on_hold', 'waiting for the landlord'],
        ['open', undefined],
        ['pending_customer', 'asked for a photo of the ONT'],
        ['resolved', undefined],
        ['open', undefined],
        ['cancelled', 'duplicate'],
      ];
      const answers: { body: Ticketed; requestId: string }[] = [];
      for (const [to, reason] of walk) {
        const res = await postTicketStatus(t, owner.token, ticket.id, to, reason);
        expectSuccess(res);
        answers.push({ body: res.body.data as Ticketed, requestId: res.body.meta.request_id as string });
      }

      const events = await statusEvents(owner.token, ticket.id);
      expect(events).toHaveLength(walk.length);
      const expected = walk
        .map(([to, reason], i) => ({
          type: 'ticket.status_changed',
          subject_id: ticket.id,
          request_id: answers[i].requestId,
          actor: { type: 'token', id: owner.tokenId },
          data: {
            object: withoutHistory(answers[i].body),
            from: i === 0 ? 'new' : walk[i - 1][0],
            to,
            reason: reason ?? null,
          },
        }))
        .reverse();
      expect(events).toEqual(expected.map((event): unknown => expect.objectContaining(event)));
      for (const event of events) {
        expect(event.data.object).not.toHaveProperty('status_history');
      }

      // The history and the events tell the same story.
      const history = (await getTicket(ticket.id, owner.token)).status_history.slice(1);
      expect(
        [...events].reverse().map((event) => ({
          from: event.data.from,
          to: event.data.to,
          reason: event.data.reason,
        })),
      ).toEqual(history.map(({ from, to, reason }) => ({ from, to, reason })));

      // Among all of the ticket's events, the moves come after ticket.created, newest first.
      const all = await listEvents(t, owner.token, { subject_id: ticket.id });
      expect(all.map((event) => event.type)).toEqual([
        ...walk.map(() => 'ticket.status_changed'),
        'ticket.created',
      ]);
    });

    it('should write none for a refused move or a missing reason', async () => {
      const ticket = await ticketIn('open');
      expectError(
        await postTicketStatus(t, desk.token, ticket.id, 'closed'),
        409,
        'invalid_state_transition',
        'status',
      );
      expectError(
        await postTicketStatus(t, desk.token, ticket.id, 'on_hold'),
        400,
        'missing_field',
        'reason',
      );
      const events = await statusEvents(desk.token, ticket.id);
      expect(events.map((event) => [event.data.from, event.data.to])).toEqual([['new', 'open']]);
    });
  });
});
