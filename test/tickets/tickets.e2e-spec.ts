import request, { type Response } from 'supertest';
import {
  expectError,
  expectList,
  expectReplayOf,
  expectSuccess,
  expectNotFound,
  successRecord,
} from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createSubscriber,
  type EventBody,
  ISO_MS,
  listEvents,
  listen,
  longString,
} from '../support/subscriber-factory';
import {
  createTenantWithToken,
  startTestApp,
  type TenantWithToken,
  type TestApp,
  issueToken,
} from '../support/test-app';
import {
  COMMENT_ID,
  createTicket,
  makeOverdue,
  postComment,
  postTicket,
  postTicketStatus,
  TICKET_ID,
  TICKET_KEYS,
  TICKET_SCOPES,
  ticketIn,
  type Ticket,
} from '../support/ticket-factory';

const HOUR = 3_600_000;
/** Well-formed, but no tenant has it. */
const UNKNOWN_TICKET = 'tkt_0000000000000000000000000Z';

type Body = Record<string, unknown>;

function hoursBetween(from: string, to: string): number {
  return (Date.parse(to) - Date.parse(from)) / HOUR;
}

/** The ticket as a list item or an event's data.object carries it: without status_history. */
function withoutHistory(ticket: Ticket): Omit<Ticket, 'status_history'> {
  const copy: Partial<Ticket> = { ...ticket };
  delete copy.status_history;
  return copy as Omit<Ticket, 'status_history'>;
}

function metadataWithKeys(count: number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, index]));
}

/** POST/PATCH/GET /tickets: creation, validation, numbering, edits, isolation, scopes and keyed replays. */
describe('Tickets: create, edit, isolation, scopes, idempotency', () => {
  let t: TestApp;
  let desk: TenantWithToken;
  let subscriberId: string;

  const call = (token: string, method: 'get' | 'post' | 'patch', path: string, body?: Body) => {
    const req = request(t.http)[method](`/api/v1/${path}`).set(bearer(token));
    return body === undefined ? req : req.send(body);
  };
  const getTicket = (id: string, token = desk.token) => call(token, 'get', `tickets/${id}`);
  const patch = (id: string, body: Body, token = desk.token) => call(token, 'patch', `tickets/${id}`, body);
  const ticketEvents = (id: string, token = desk.token) => listEvents(t, token, { subject_id: id });

  async function readTicket(id: string, token = desk.token): Promise<Ticket> {
    const res = await getTicket(id, token);
    expectSuccess(res);
    return res.body.data as Ticket;
  }

  async function listIds(token: string, query = ''): Promise<string[]> {
    const res = await call(token, 'get', `tickets?limit=100${query}`);
    expectList(res);
    return (res.body.data as Ticket[]).map((ticket) => ticket.id);
  }

  beforeAll(async () => {
    t = await startTestApp();
    await listen(t);
    desk = await createTenantWithToken(t, TICKET_SCOPES);
    subscriberId = (await createSubscriber(t, desk.token)).id;
  });

  afterAll(async () => {
    await t.close();
  });

  describe('POST /api/v1/tickets: defaults', () => {
    it('should open ticket 1 of a fresh tenant with every default, its SLA and its first history entry', async () => {
      const fresh = await createTenantWithToken(t, TICKET_SCOPES);
      const res = await postTicket(t, fresh.token, { subject: '  No internet since this morning  ' });
      const ticket = successRecord<Ticket>(res, [...TICKET_KEYS, 'status_history'].sort(), 201);
      expect(withoutHistory(ticket)).toEqual({
        id: expect.stringMatching(TICKET_ID),
        number: 1,
        subject: 'No internet since this morning',
        description: null,
        type: 'question',
        priority: 'normal',
        status: 'new',
        subscriber_id: null,
        assignee: null,
        tags: [],
        external_id: null,
        metadata: {},
        due_at: expect.stringMatching(ISO_MS),
        overdue: false,
        first_response_at: null,
        resolved_at: null,
        closed_at: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: ticket.created_at,
      });
      expect(hoursBetween(ticket.created_at, ticket.due_at)).toBe(72);
      expect(Math.abs(Date.parse(ticket.created_at) - Date.now())).toBeLessThan(60_000);
      expect(ticket.status_history).toEqual([
        {
          from: null,
          to: 'new',
          reason: null,
          actor: { type: 'token', id: fresh.tokenId },
          at: ticket.created_at,
        },
      ]);
      expect(await readTicket(ticket.id, fresh.token)).toEqual(ticket);
      expect((await createTicket(t, fresh.token)).number).toBe(2);
    });

    it.each([
      ['urgent', 4],
      ['high', 24],
      ['normal', 72],
      ['low', 168],
    ])('should make a %s ticket due exactly %i hours after its creation', async (priority, hours) => {
      const ticket = await createTicket(t, desk.token, { priority });
      expect(ticket.priority).toBe(priority);
      expect(hoursBetween(ticket.created_at, ticket.due_at)).toBe(hours);
      expect(ticket.overdue).toBe(false);
    });

    it('should keep every field sent: texts trimmed, the description verbatim', async () => {
      const ticket = await createTicket(t, desk.token, {
        subject: 'Slow speeds in the evening',
        description: '  Kept verbatim,\nwith its spaces.  ',
        type: 'incident',
        priority: 'high',
        subscriber_id: subscriberId,
        assignee: '  noc.jane  ',
        tags: ['fiber'],
        external_id: '  helpdesk-kept  ',
        metadata: { channel: 'phone', floor: 3, callback: true, note: null },
      });
      expect(withoutHistory(ticket)).toMatchObject({
        subject: 'Slow speeds in the evening',
        description: '  Kept verbatim,\nwith its spaces.  ',
        type: 'incident',
        priority: 'high',
        subscriber_id: subscriberId,
        assignee: 'noc.jane',
        tags: ['fiber'],
        external_id: 'helpdesk-kept',
      });
      expect(ticket.metadata).toMatchObject({ channel: 'phone', floor: 3, callback: true });
      expect(await readTicket(ticket.id)).toEqual(ticket);
    });

    it.each(['incident', 'problem', 'question', 'task', 'installation', 'billing'])(
      'should accept the type %s',
      async (type) => {
        expect((await createTicket(t, desk.token, { type })).type).toBe(type);
      },
    );

    it('should accept every limit exactly: 200, 20,000, 200, 20 tags of 50, 200, 50 metadata keys', async () => {
      const tags = Array.from(
        { length: 20 },
        (_, index) => `${String(index).padStart(2, '0')}${'t'.repeat(48)}`,
      );
      const metadata = { ...metadataWithKeys(49), [longString(40, 'k')]: longString(500) };
      const ticket = await createTicket(t, desk.token, {
        subject: longString(200, 's'),
        description: longString(20000, 'd'),
        assignee: longString(200, 'a'),
        tags,
        external_id: longString(200, 'e'),
        metadata,
      });
      expect(ticket.subject).toHaveLength(200);
      expect(ticket.description).toHaveLength(20000);
      expect(ticket.assignee).toHaveLength(200);
      expect(ticket.tags).toEqual(tags);
      expect(ticket.external_id).toHaveLength(200);
      expect(ticket.metadata).toEqual(metadata);
    });

    it('should store tags trimmed, lower-cased and each once, in the order first seen', async () => {
      const ticket = await createTicket(t, desk.token, {
        tags: ['Fiber', 'OUTAGE', '  fiber ', 'outage', 'Street-14', 'FIBER', `  ${longString(50, 'X')}  `],
      });
      expect(ticket.tags).toEqual(['fiber', 'outage', 'street-14', longString(50, 'x')]);
      expect((await readTicket(ticket.id)).tags).toEqual(ticket.tags);
    });
  });

  describe('POST /api/v1/tickets: refusals', () => {
    const twentyOneTags = Array.from({ length: 21 }, (_, index) => `tag-${index}`);
    it.each<[string, Body, number, string, string]>([
      ['no subject', { subject: undefined }, 400, 'missing_field', 'subject'],
      ['a null subject', { subject: null }, 400, 'missing_field', 'subject'],
      ['an empty subject', { subject: '' }, 422, 'validation_failed', 'subject'],
      ['a whitespace subject', { subject: ' \t  ' }, 422, 'validation_failed', 'subject'],
      ['a subject of 201 characters', { subject: longString(201) }, 422, 'validation_failed', 'subject'],
      ['a numeric subject', { subject: 42 }, 422, 'validation_failed', 'subject'],
      ['an array subject', { subject: ['No internet'] }, 422, 'validation_failed', 'subject'],
      [
        'a description of 20,001',
        { description: longString(20001) },
        422,
        'validation_failed',
        'description',
      ],
      ['a numeric description', { description: 7 }, 422, 'validation_failed', 'description'],
      ['an unknown type', { type: 'rant' }, 422, 'validation_failed', 'type'],
      ['an upper-case type', { type: 'INCIDENT' }, 422, 'validation_failed', 'type'],
      ['a numeric type', { type: 1 }, 422, 'validation_failed', 'type'],
      ['an unknown priority', { priority: 'critical' }, 422, 'validation_failed', 'priority'],
      ['a numeric priority', { priority: 2 }, 422, 'validation_failed', 'priority'],
      [
        'an unknown subscriber',
        { subscriber_id: 'sub_0000000000000000000000000Z' },
        422,
        'invalid_reference',
        'subscriber_id',
      ],
      ['a subscriber_id of no kind', { subscriber_id: 'nope' }, 422, 'invalid_reference', 'subscriber_id'],
      ['a numeric subscriber_id', { subscriber_id: 7 }, 422, 'validation_failed', 'subscriber_id'],
      ['an assignee of 201', { assignee: longString(201) }, 422, 'validation_failed', 'assignee'],
      ['a whitespace assignee', { assignee: '   ' }, 422, 'validation_failed', 'assignee'],
      ['a numeric assignee', { assignee: 12 }, 422, 'validation_failed', 'assignee'],
      ['tags as a string', { tags: 'fiber' }, 422, 'validation_failed', 'tags'],
      ['tags as an object', { tags: { 0: 'fiber' } }, 422, 'validation_failed', 'tags'],
      ['21 tags', { tags: twentyOneTags }, 422, 'validation_failed', 'tags'],
      ['a tag of 51', { tags: ['ok', longString(51, 'x')] }, 422, 'validation_failed', 'tags.1'],
      ['an empty tag', { tags: ['ok', 'fine', ''] }, 422, 'validation_failed', 'tags.2'],
      ['a whitespace tag', { tags: ['  '] }, 422, 'validation_failed', 'tags.0'],
      ['a numeric tag', { tags: ['ok', 'fine', 'good', 3] }, 422, 'validation_failed', 'tags.3'],
      ['a null tag', { tags: ['ok', null] }, 422, 'validation_failed', 'tags.1'],
      ['an external_id of 201', { external_id: longString(201) }, 422, 'validation_failed', 'external_id'],
      ['a whitespace external_id', { external_id: '  ' }, 422, 'validation_failed', 'external_id'],
      ['metadata as an array', { metadata: ['a'] }, 422, 'validation_failed', 'metadata'],
      ['metadata as a string', { metadata: 'plan' }, 422, 'validation_failed', 'metadata'],
      ['metadata with 51 keys', { metadata: metadataWithKeys(51) }, 422, 'validation_failed', 'metadata'],
      [
        'a metadata key of 41',
        { metadata: { [longString(41, 'k')]: 1 } },
        422,
        'validation_failed',
        `metadata.${longString(41, 'k')}`,
      ],
      [
        'a metadata value of 501',
        { metadata: { note: longString(501) } },
        422,
        'validation_failed',
        'metadata.note',
      ],
      [
        'a nested metadata object',
        { metadata: { plan: { speed: 1 } } },
        422,
        'validation_failed',
        'metadata.plan',
      ],
      ['an array metadata value', { metadata: { tags: ['a'] } }, 422, 'validation_failed', 'metadata.tags'],
      ['an unknown field', { colour: 'red' }, 400, 'unknown_field', 'colour'],
      ['a status', { status: 'open' }, 400, 'unknown_field', 'status'],
      ['a number', { number: 7 }, 400, 'unknown_field', 'number'],
      ['a due_at', { due_at: '2030-01-01T00:00:00.000Z' }, 400, 'unknown_field', 'due_at'],
    ])('should refuse %s', async (_case, fields, status, code, field) => {
      const res = await postTicket(t, desk.token, { subject: 'Refused', ...fields });
      expectError(res, status, code, field);
    });

    it('should refuse a refused create without writing a ticket or taking a number', async () => {
      const fresh = await createTenantWithToken(t, TICKET_SCOPES);
      expectError(await postTicket(t, fresh.token, { subject: '' }), 422, 'validation_failed', 'subject');
      expectError(
        await postTicket(t, fresh.token, { subject: 'x', subscriber_id: subscriberId }),
        422,
        'invalid_reference',
        'subscriber_id',
      );
      expect(await listIds(fresh.token)).toEqual([]);
      expect((await createTicket(t, fresh.token)).number).toBe(1);
    });

    it("should refuse another tenant's subscriber as 422 invalid_reference", async () => {
      const other = await createTenantWithToken(t, TICKET_SCOPES);
      const theirs = await createSubscriber(t, other.token);
      expectError(
        await postTicket(t, desk.token, { subject: 'Theirs', subscriber_id: theirs.id }),
        422,
        'invalid_reference',
        'subscriber_id',
      );
      expect((await createTicket(t, other.token, { subscriber_id: theirs.id })).subscriber_id).toBe(
        theirs.id,
      );
    });

    it('should answer 409 duplicate_ticket for an external_id the tenant has, trimmed, but not for another tenant', async () => {
      const fresh = await createTenantWithToken(t, TICKET_SCOPES);
      const first = await createTicket(t, fresh.token, { external_id: 'helpdesk-4821' });
      for (const externalId of ['helpdesk-4821', '  helpdesk-4821  ']) {
        expectError(
          await postTicket(t, fresh.token, { subject: 'Again', external_id: externalId }),
          409,
          'duplicate_ticket',
          'external_id',
        );
      }
      expect(await listIds(fresh.token)).toEqual([first.id]);
      // The refused creates gave their numbers back.
      expect((await createTicket(t, fresh.token)).number).toBe(2);

      const other = await createTenantWithToken(t, TICKET_SCOPES);
      const theirs = await createTicket(t, other.token, { external_id: 'helpdesk-4821' });
      expect(theirs).toMatchObject({ external_id: 'helpdesk-4821', number: 1 });
    });
  });

  describe('POST /api/v1/tickets: numbering', () => {
    it('should number 50 parallel creates in a fresh tenant 1 to 50, each once', async () => {
      const fresh = await createTenantWithToken(t, TICKET_SCOPES);
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, index) => postTicket(t, fresh.token, { subject: `Call ${index}` })),
      );
      expect(answers.map((res) => res.status)).toEqual(Array.from({ length: 50 }, () => 201));
      const numbers = answers.map((res) => res.body.data.number as number).sort((a, b) => a - b);
      expect(numbers).toEqual(Array.from({ length: 50 }, (_, index) => index + 1));
      expect(new Set(answers.map((res) => res.body.data.id as string)).size).toBe(50);
      expect((await createTicket(t, fresh.token)).number).toBe(51);
    });

    it('should leave no gap when creates fail among parallel ones', async () => {
      const fresh = await createTenantWithToken(t, TICKET_SCOPES);
      await createTicket(t, fresh.token, { external_id: 'taken' });
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, index) => {
          if (index % 5 === 1) {
            // Fails on the reference, after the body was accepted.
            return postTicket(t, fresh.token, { subject: `Bad ${index}`, subscriber_id: subscriberId });
          }
          if (index % 5 === 3) {
            return postTicket(t, fresh.token, { subject: `Dup ${index}`, external_id: 'taken' });
          }
          return postTicket(t, fresh.token, { subject: `Call ${index}` });
        }),
      );
      expect(answers.filter((res) => res.status === 422)).toHaveLength(6);
      expect(answers.filter((res) => res.status === 409)).toHaveLength(6);
      const numbers = answers
        .filter((res) => res.status === 201)
        .map((res) => res.body.data.number as number)
        .sort((a, b) => a - b);
      expect(numbers).toEqual(Array.from({ length: 18 }, (_, index) => index + 2));
      expect((await createTicket(t, fresh.token)).number).toBe(20);
    });

    it('should number each tenant on its own, both from 1', async () => {
      const [a, b] = await Promise.all([
        createTenantWithToken(t, TICKET_SCOPES),
        createTenantWithToken(t, TICKET_SCOPES),
      ]);
      expect((await createTicket(t, a.token)).number).toBe(1);
      expect((await createTicket(t, a.token)).number).toBe(2);
      expect((await createTicket(t, b.token)).number).toBe(1);
    });
  });

  describe('ticket.created', () => {
    it('should record the ticket, without status_history, as data.object with the token as actor', async () => {
      const ticket = await createTicket(t, desk.token, { subscriber_id: subscriberId, tags: ['Fiber'] });
      const events = await ticketEvents(ticket.id);
      expect(events.map((event) => event.type)).toEqual(['ticket.created']);
      expect(events[0].subject_id).toBe(ticket.id);
      expect(events[0].data.object).toEqual(withoutHistory(ticket));
      expect(events[0].actor).toEqual({ type: 'token', id: desk.tokenId });
    });
  });

  describe('PATCH /api/v1/tickets/{id}', () => {
    const base = {
      description: 'The ONT shows a red light.',
      type: 'incident',
      assignee: 'noc.jane',
      tags: ['fiber', 'outage'],
      metadata: { channel: 'phone', floor: 3 },
    };
    it.each<[string, Body, Partial<Ticket>]>([
      ['subject', { subject: '  Renamed  ' }, { subject: 'Renamed' }],
      ['description', { description: ' New text ' }, { description: ' New text ' }],
      ['description', { description: null }, { description: null }],
      ['type', { type: 'billing' }, { type: 'billing' }],
      ['assignee', { assignee: ' noc.omar ' }, { assignee: 'noc.omar' }],
      ['assignee', { assignee: null }, { assignee: null }],
      ['tags', { tags: ['Street-14', 'street-14 ', 'FIBER'] }, { tags: ['street-14', 'fiber'] }],
      ['tags', { tags: [] }, { tags: [] }],
      [
        'metadata',
        { metadata: { floor: 4, vip: true } },
        { metadata: { channel: 'phone', floor: 4, vip: true } },
      ],
      ['metadata', { metadata: { channel: null, gone: null } }, { metadata: { floor: 3 } }],
      ['metadata', { metadata: null }, { metadata: {} }],
    ])('should change %s alone with %j, and record it in ticket.updated', async (field, body, expected) => {
      const ticket = await createTicket(t, desk.token, base);
      const res = await patch(ticket.id, body);
      expectSuccess(res);
      const updated = res.body.data as Ticket;
      expect(updated).toEqual({
        ...ticket,
        ...expected,
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(Date.parse(updated.updated_at)).toBeGreaterThanOrEqual(Date.parse(ticket.updated_at));
      expect(await readTicket(ticket.id)).toEqual(updated);
      const events = await ticketEvents(ticket.id);
      expect(events.map((event) => event.type)).toEqual(['ticket.updated', 'ticket.created']);
      expect(events[0].data.changed_fields).toEqual([field]);
      expect(events[0].data.object).toEqual(withoutHistory(updated));
      expect(events[0].actor).toEqual({ type: 'token', id: desk.tokenId });
    });

    it('should change several fields at once and name each in changed_fields', async () => {
      const ticket = await createTicket(t, desk.token, base);
      const res = await patch(ticket.id, {
        subject: 'Whole street down',
        description: null,
        assignee: 'noc.omar',
        tags: ['street-14'],
        metadata: { floor: null },
      });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        subject: 'Whole street down',
        description: null,
        type: 'incident',
        assignee: 'noc.omar',
        tags: ['street-14'],
        metadata: { channel: 'phone' },
        due_at: ticket.due_at,
        status: 'new',
      });
      expect(res.body.data.status_history).toEqual(ticket.status_history);
      const [event] = await ticketEvents(ticket.id);
      expect([...(event.data.changed_fields as string[])].sort()).toEqual(
        ['assignee', 'description', 'metadata', 'subject', 'tags'].sort(),
      );
    });

    it('should recompute due_at from created_at when the priority changes, both ways', async () => {
      const ticket = await createTicket(t, desk.token, { priority: 'low' });
      await makeOverdue(t, ticket.id);
      expect((await readTicket(ticket.id)).overdue).toBe(true);
      const urgent = await patch(ticket.id, { priority: 'urgent' });
      expectSuccess(urgent);
      expect(urgent.body.data.priority).toBe('urgent');
      expect(hoursBetween(ticket.created_at, urgent.body.data.due_at)).toBe(4);
      expect(urgent.body.data.overdue).toBe(false);
      const [event] = await ticketEvents(ticket.id);
      expect(event.data.changed_fields).toEqual(expect.arrayContaining(['priority']));
      const high = await patch(ticket.id, { priority: 'high' });
      expect(hoursBetween(ticket.created_at, high.body.data.due_at)).toBe(24);
      expect((await readTicket(ticket.id)).due_at).toBe(high.body.data.due_at);
    });

    it('should leave due_at alone when the priority sent is the current one', async () => {
      const ticket = await createTicket(t, desk.token, { priority: 'high' });
      await makeOverdue(t, ticket.id);
      const lapsed = await readTicket(ticket.id);
      const res = await patch(ticket.id, { priority: 'high' });
      expectSuccess(res);
      expect(res.body.data).toEqual(lapsed);
      expect(res.body.data.overdue).toBe(true);
    });

    it('should answer 200 and write nothing for a PATCH that changes nothing', async () => {
      const ticket = await createTicket(t, desk.token, base);
      for (const body of [
        {},
        {
          subject: `  ${ticket.subject} `,
          description: base.description,
          type: 'incident',
          priority: 'normal',
          assignee: 'noc.jane',
          tags: ['FIBER', 'outage', 'fiber'],
          metadata: { channel: 'phone', absent: null },
        },
      ]) {
        const res = await patch(ticket.id, body);
        expectSuccess(res);
        expect(res.body.data).toEqual(ticket);
      }
      expect(await readTicket(ticket.id)).toEqual(ticket);
      expect((await ticketEvents(ticket.id)).map((event) => event.type)).toEqual(['ticket.created']);
    });

    it('should accept edits on a resolved ticket, which is not final', async () => {
      const ticket = await ticketIn(t, desk.token, 'resolved');
      const res = await patch(ticket.id, { assignee: 'noc.omar' });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ status: 'resolved', assignee: 'noc.omar' });
    });

    it.each<[string, Body, number, string, string]>([
      ['a status', { status: 'open' }, 400, 'unknown_field', 'status'],
      [
        'a subscriber_id',
        { subscriber_id: 'sub_0000000000000000000000000Z' },
        400,
        'unknown_field',
        'subscriber_id',
      ],
      ['an external_id', { external_id: 'helpdesk-9' }, 400, 'unknown_field', 'external_id'],
      ['a number', { number: 9 }, 400, 'unknown_field', 'number'],
      ['a due_at', { due_at: '2030-01-01T00:00:00.000Z' }, 400, 'unknown_field', 'due_at'],
      ['an unknown field', { colour: 'red' }, 400, 'unknown_field', 'colour'],
      ['a null subject', { subject: null }, 422, 'validation_failed', 'subject'],
      ['a whitespace subject', { subject: '  ' }, 422, 'validation_failed', 'subject'],
      ['a subject of 201', { subject: longString(201) }, 422, 'validation_failed', 'subject'],
      [
        'a description of 20,001',
        { description: longString(20001) },
        422,
        'validation_failed',
        'description',
      ],
      ['an unknown type', { type: 'rant' }, 422, 'validation_failed', 'type'],
      ['an unknown priority', { priority: 'asap' }, 422, 'validation_failed', 'priority'],
      ['an assignee of 201', { assignee: longString(201) }, 422, 'validation_failed', 'assignee'],
      ['tags as a string', { tags: 'fiber' }, 422, 'validation_failed', 'tags'],
      ['a numeric tag', { tags: ['ok', 5] }, 422, 'validation_failed', 'tags.1'],
      ['a tag of 51', { tags: ['ok', 'fine', longString(51)] }, 422, 'validation_failed', 'tags.2'],
      ['an array metadata value', { metadata: { a: [] } }, 422, 'validation_failed', 'metadata.a'],
      [
        'a metadata value of 501',
        { metadata: { note: longString(501) } },
        422,
        'validation_failed',
        'metadata.note',
      ],
    ])('should refuse %s and change nothing', async (_case, body, status, code, field) => {
      const ticket = await createTicket(t, desk.token, base);
      expectError(await patch(ticket.id, { subject: 'Also sent', ...body }), status, code, field);
      expect(await readTicket(ticket.id)).toEqual(ticket);
    });

    it('should refuse metadata that would hold more than 50 keys once merged', async () => {
      const ticket = await createTicket(t, desk.token, { metadata: metadataWithKeys(50) });
      expectError(await patch(ticket.id, { metadata: { k50: 50 } }), 422, 'validation_failed', 'metadata');
      expectSuccess(await patch(ticket.id, { metadata: { k0: null, k50: 50 } }));
    });

    it.each(['closed', 'cancelled'] as const)(
      'should answer 409 ticket_closed on a %s ticket and change nothing',
      async (state) => {
        const ticket = await ticketIn(t, desk.token, state);
        const before = await readTicket(ticket.id);
        for (const body of [{ subject: 'Too late' }, { priority: 'urgent' }, { tags: ['late'] }]) {
          expectError(await patch(ticket.id, body), 409, 'ticket_closed', 'status');
        }
        expect(await readTicket(ticket.id)).toEqual(before);
        expect((await ticketEvents(ticket.id)).some((event) => event.type === 'ticket.updated')).toBe(false);
      },
    );

    it.each([UNKNOWN_TICKET, 'tkt_nope', 'sub_0000000000000000000000000Z'])(
      'should answer 404 not_found for %s',
      async (id) => {
        expectNotFound(await patch(id, { subject: 'x' }));
        expectNotFound(await getTicket(id));
      },
    );
  });

  describe('overdue', () => {
    it('should be computed on every read, and false once the ticket is resolved', async () => {
      const ticket = await createTicket(t, desk.token);
      expect(ticket.overdue).toBe(false);
      await makeOverdue(t, ticket.id);
      expect((await readTicket(ticket.id)).overdue).toBe(true);
      const listed = await call(desk.token, 'get', 'tickets?limit=100');
      expect((listed.body.data as Ticket[]).find((item) => item.id === ticket.id)?.overdue).toBe(true);
      expectSuccess(await postTicketStatus(t, desk.token, ticket.id, 'open'));
      const resolved = await postTicketStatus(t, desk.token, ticket.id, 'resolved');
      expectSuccess(resolved);
      expect(resolved.body.data.overdue).toBe(false);
    });
  });

  describe('tenant isolation', () => {
    let other: TenantWithToken;
    let theirs: Ticket;
    let theirSubscriber: string;

    beforeAll(async () => {
      other = await createTenantWithToken(t, TICKET_SCOPES);
      theirSubscriber = (await createSubscriber(t, other.token)).id;
      theirs = await createTicket(t, other.token, {
        subscriber_id: theirSubscriber,
        tags: ['isolation'],
        assignee: 'noc.isolated',
      });
    });

    it.each<[string, 'get' | 'post' | 'patch', (id: string) => string, Body | undefined]>([
      ['GET the ticket', 'get', (id) => `tickets/${id}`, undefined],
      ['PATCH it', 'patch', (id) => `tickets/${id}`, { subject: 'Hijacked' }],
      ['POST a status', 'post', (id) => `tickets/${id}/status`, { status: 'open' }],
      ['POST a comment', 'post', (id) => `tickets/${id}/comments`, { body: 'Hello', public: true }],
      ['GET its comments', 'get', (id) => `tickets/${id}/comments`, undefined],
    ])("should answer 404 to %s of another tenant's ticket", async (_case, method, path, body) => {
      expectNotFound(await call(desk.token, method, path(theirs.id), body));
    });

    it("should have left the other tenant's ticket untouched, without a comment or an event of ours", async () => {
      const read = await readTicket(theirs.id, other.token);
      expect(read).toEqual(theirs);
      const comments = await call(other.token, 'get', `tickets/${theirs.id}/comments`);
      expectList(comments);
      expect(comments.body.data).toEqual([]);
      expect((await ticketEvents(theirs.id, other.token)).map((event) => event.type)).toEqual([
        'ticket.created',
      ]);
      expect(await listEvents(t, desk.token, { subject_id: theirs.id })).toEqual([]);
    });

    it("should answer 404 for another tenant's subscriber's tickets", async () => {
      expectNotFound(await call(desk.token, 'get', `subscribers/${theirSubscriber}/tickets`));
      const own = await call(other.token, 'get', `subscribers/${theirSubscriber}/tickets`);
      expectList(own);
      expect((own.body.data as Ticket[]).map((ticket) => ticket.id)).toEqual([theirs.id]);
    });

    it("should never list another tenant's tickets, whatever the filter", async () => {
      for (const query of [
        '',
        '&tag=isolation',
        '&assignee=noc.isolated',
        `&subscriber_id=${theirSubscriber}`,
        '&status=new',
        '&q=internet',
      ]) {
        expect(await listIds(desk.token, query)).not.toContain(theirs.id);
      }
      expect(await listIds(other.token)).toEqual([theirs.id]);
    });
  });

  describe('scopes', () => {
    let ticket: Ticket;
    let reader: string;
    let none: string;

    beforeAll(async () => {
      ticket = await createTicket(t, desk.token);
      reader = (await issueToken(t, desk.slug, ['tickets:read'])).token;
      none = (await issueToken(t, desk.slug, ['subscribers:read', 'subscribers:write', 'events:read'])).token;
    });

    const writes: [string, 'post' | 'patch', (id: string) => string, Body][] = [
      ['POST /tickets', 'post', () => 'tickets', { subject: 'Scoped' }],
      ['PATCH /tickets/{id}', 'patch', (id) => `tickets/${id}`, { subject: 'Scoped' }],
      ['POST /tickets/{id}/status', 'post', (id) => `tickets/${id}/status`, { status: 'open' }],
      ['POST /tickets/{id}/comments', 'post', (id) => `tickets/${id}/comments`, { body: 'x', public: true }],
    ];
    const reads: [string, (id: string) => string][] = [
      ['GET /tickets', () => 'tickets'],
      ['GET /tickets/{id}', (id) => `tickets/${id}`],
      ['GET /tickets/{id}/comments', (id) => `tickets/${id}/comments`],
      ['GET /subscribers/{id}/tickets', () => `subscribers/${subscriberId}/tickets`],
    ];

    it.each(writes)(
      'should answer 403 insufficient_scope to %s with only tickets:read',
      async (_r, method, path, body) => {
        expectError(await call(reader, method, path(ticket.id), body), 403, 'insufficient_scope');
      },
    );

    it('should have changed nothing through the refused writes', async () => {
      expect(await readTicket(ticket.id)).toEqual(ticket);
      expect(await listIds(desk.token, '&q=Scoped')).toEqual([]);
      expect((await ticketEvents(ticket.id)).map((event) => event.type)).toEqual(['ticket.created']);
    });

    it.each(reads)('should answer 403 insufficient_scope to %s without a tickets scope', async (_r, path) => {
      expectError(await call(none, 'get', path(ticket.id)), 403, 'insufficient_scope');
    });

    it.each(reads)('should answer %s with only tickets:read', async (_r, path) => {
      const res = await call(reader, 'get', path(ticket.id));
      expect(res.status).toBe(200);
    });

    it.each(['tickets:*', 'admin'])('should allow every route to a token with %s', async (scope) => {
      const token = (await issueToken(t, desk.slug, [scope])).token;
      const created = await call(token, 'post', 'tickets', {
        subject: `With ${scope}`,
        subscriber_id: subscriberId,
      });
      expectSuccess(created, 201);
      const id = created.body.data.id as string;
      expectSuccess(await call(token, 'patch', `tickets/${id}`, { assignee: 'noc.jane' }));
      expectSuccess(await call(token, 'post', `tickets/${id}/status`, { status: 'open' }));
      expectSuccess(
        await call(token, 'post', `tickets/${id}/comments`, { body: 'On it', public: true }),
        201,
      );
      for (const [, path] of reads) {
        expect((await call(token, 'get', path(id))).status).toBe(200);
      }
    });
  });

  describe('idempotency', () => {
    it.each(['X-Idempotency-Key', 'Idempotency-Key'])(
      'should create one ticket with one number for a create sent twice with one %s',
      async (header) => {
        const fresh = await createTenantWithToken(t, TICKET_SCOPES);
        const headers = { [header]: `create-${fresh.slug}` };
        const body = { subject: 'Keyed create', tags: ['Keyed'] };
        const first = await postTicket(t, fresh.token, body, headers);
        expectSuccess(first, 201);
        expect(first.body.data.number).toBe(1);
        const replay = await postTicket(t, fresh.token, body, headers);
        expectReplayOf(replay, first);
        expect(replay.headers['original-request-id']).toBe(first.headers['x-request-id']);
        expect(await listIds(fresh.token)).toEqual([first.body.data.id]);
        expect((await ticketEvents(first.body.data.id, fresh.token)).map((event) => event.type)).toEqual([
          'ticket.created',
        ]);
        expect((await createTicket(t, fresh.token)).number).toBe(2);
      },
    );

    it('should move a ticket once for a status move sent twice with one key', async () => {
      const ticket = await createTicket(t, desk.token);
      const move = () =>
        request(t.http)
          .post(`/api/v1/tickets/${ticket.id}/status`)
          .set(bearer(desk.token))
          .set('X-Idempotency-Key', `move-${ticket.id}`)
          .send({ status: 'open' });
      const first = await move();
      expectSuccess(first);
      const replay = await move();
      expectReplayOf(replay, first);
      const read = await readTicket(ticket.id);
      expect(read.status_history?.map((entry) => entry.to)).toEqual(['new', 'open']);
      const events = await ticketEvents(ticket.id);
      expect(events.filter((event) => event.type === 'ticket.status_changed')).toHaveLength(1);
    });

    it('should add one comment for a comment sent twice with one key', async () => {
      const ticket = await ticketIn(t, desk.token, 'open');
      const send = () =>
        request(t.http)
          .post(`/api/v1/tickets/${ticket.id}/comments`)
          .set(bearer(desk.token))
          .set('X-Idempotency-Key', `comment-${ticket.id}`)
          .send({ body: 'A technician is on the way.', public: true });
      const first: Response = await send();
      expectSuccess(first, 201);
      expect(first.body.data.id).toMatch(COMMENT_ID);
      expectReplayOf(await send(), first);
      const comments = await call(desk.token, 'get', `tickets/${ticket.id}/comments`);
      expectList(comments);
      expect(comments.body.data).toEqual([first.body.data]);
      const added = (await ticketEvents(ticket.id)).filter(
        (event: EventBody) => event.type === 'ticket.comment_added',
      );
      expect(added).toHaveLength(1);
    });

    it('should answer 422 idempotency_key_reused for the same key with another body', async () => {
      const fresh = await createTenantWithToken(t, TICKET_SCOPES);
      const headers = { 'X-Idempotency-Key': 'reused' };
      expectSuccess(await postTicket(t, fresh.token, { subject: 'First' }, headers), 201);
      expectError(
        await postTicket(t, fresh.token, { subject: 'Second' }, headers),
        422,
        'idempotency_key_reused',
        'X-Idempotency-Key',
      );
      expect(await listIds(fresh.token)).toHaveLength(1);
    });

    it('should add two comments for the same comment sent twice without a key', async () => {
      const ticket = await ticketIn(t, desk.token, 'open');
      for (let index = 0; index < 2; index += 1) {
        expectSuccess(
          await postComment(t, desk.token, ticket.id, { body: 'Same words', public: false }),
          201,
        );
      }
      const comments = await call(desk.token, 'get', `tickets/${ticket.id}/comments`);
      expect(comments.body.data).toHaveLength(2);
    });
  });
});
