import request from 'supertest';
import { expectError, expectList } from './support/envelope';
import { bearer } from './support/factories';
import { createSubscriber } from './support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from './support/test-app';
import {
  makeOverdue,
  TICKET_KEYS,
  TICKET_SCOPES,
  ticketIn,
  type Ticket,
  type TicketStatus,
} from './support/ticket-factory';

/** One fixture ticket as the test knows it, to compute what each filter must answer. */
interface Known {
  id: string;
  status: TicketStatus;
  priority: string;
  type: string;
  subscriber: 0 | 1 | null;
  assignee: string | null;
  tags: string[];
  subject: string;
  description: string | null;
  overdue: boolean;
  createdAt: string;
}

const STATES: TicketStatus[] = [
  'new',
  'open',
  'pending_customer',
  'on_hold',
  'resolved',
  'closed',
  'cancelled',
];
const PRIORITIES = ['low', 'normal', 'high', 'urgent'];
const TYPES = ['incident', 'problem', 'question', 'task', 'installation', 'billing'];
const SUBJECTS = [
  'No Internet at all',
  'Router reboots',
  '50% packet loss',
  'Bill shows 500 USD',
  'slow_dns',
];

/** Issue #14: every list filter, alone and combined, across pages, for /tickets and /subscribers/{id}/tickets. */
describe('Tickets: lists and filters', () => {
  let t: TestApp;
  let desk: TenantWithToken;
  const subscribers: string[] = [];
  const known: Known[] = [];

  /** Every id of a list, walking its pages three at a time; checks order and the last page's pagination. */
  async function walk(path: string, query: Record<string, string>): Promise<string[]> {
    const ids: string[] = [];
    let last: { created_at: string; id: string } | null = null;
    let cursor: string | null = null;
    for (let page = 0; page < 50; page++) {
      const res = await request(t.http)
        .get(path)
        .query({ ...query, limit: '3', ...(cursor ? { starting_after: cursor } : {}) })
        .set(bearer(desk.token));
      expectList(res);
      for (const ticket of res.body.data as Ticket[]) {
        expect(Object.keys(ticket).sort()).toEqual([...TICKET_KEYS].sort());
        if (last) {
          // Newest first by (created_at, id): strictly before the previous one, on this page or the last.
          const before =
            ticket.created_at < last.created_at ||
            (ticket.created_at === last.created_at && ticket.id < last.id);
          expect(before).toBe(true);
        }
        last = ticket;
        ids.push(ticket.id);
      }
      cursor = res.body.meta.pagination.next_cursor as string | null;
      expect(res.body.meta.pagination.has_more).toBe(cursor !== null);
      if (!cursor) {
        return ids;
      }
    }
    throw new Error('more than 50 pages');
  }

  const expected = (keep: (ticket: Known) => boolean) => known.filter(keep).map((ticket) => ticket.id);
  const sameSet = (got: string[], want: string[]) => {
    expect(new Set(got).size).toBe(got.length);
    expect([...got].sort()).toEqual([...want].sort());
  };

  beforeAll(async () => {
    t = await startTestApp();
    desk = await createTenantWithToken(t, TICKET_SCOPES);
    for (let index = 0; index < 2; index++) {
      subscribers.push((await createSubscriber(t, desk.token)).id);
    }
    for (let index = 0; index < 35; index++) {
      const status = STATES[index % STATES.length];
      const subscriber = index % 3 === 2 ? null : ((index % 3) as 0 | 1);
      const body = {
        subject: SUBJECTS[index % SUBJECTS.length] + ` #${index}`,
        description: index % 4 === 0 ? null : `Reported by phone; line ${index % 2 ? 'FIBER' : 'dsl'} 50_000`,
        priority: PRIORITIES[index % PRIORITIES.length],
        type: TYPES[index % TYPES.length],
        assignee: index % 5 === 0 ? null : `agent-${index % 3}`,
        tags: index % 2 ? ['Outage', 'street-9'] : ['billing'],
        ...(subscriber === null ? {} : { subscriber_id: subscribers[subscriber] }),
      };
      const ticket = await ticketIn(t, desk.token, status, body);
      // Every fourth ticket's SLA has lapsed; the resolved, closed and cancelled among them are still not overdue.
      const lapsed = index % 4 === 1;
      if (lapsed) {
        await makeOverdue(t, ticket.id);
      }
      known.push({
        id: ticket.id,
        status,
        priority: body.priority,
        type: body.type,
        subscriber,
        assignee: body.assignee,
        tags: body.tags.map((tag) => tag.toLowerCase()),
        subject: body.subject,
        description: body.description,
        overdue: lapsed && !['resolved', 'closed', 'cancelled'].includes(status),
        createdAt: ticket.created_at,
      });
    }
    expect(known.some((ticket) => ticket.overdue)).toBe(true);
    expect(known.some((ticket) => ticket.status === 'resolved' && !ticket.overdue)).toBe(true);
  });

  afterAll(async () => {
    await t.close();
  });

  const text = (ticket: Known) => `${ticket.subject}\n${ticket.description ?? ''}`.toLowerCase();
  const CASES: [string, Record<string, string>, (ticket: Known) => boolean][] = [
    ['no filter', {}, () => true],
    ['status', { status: 'open' }, (k) => k.status === 'open'],
    [
      'several statuses',
      { status: 'new,open,on_hold' },
      (k) => ['new', 'open', 'on_hold'].includes(k.status),
    ],
    ['priority', { priority: 'urgent' }, (k) => k.priority === 'urgent'],
    ['several priorities', { priority: 'high, urgent' }, (k) => ['high', 'urgent'].includes(k.priority)],
    ['type', { type: 'incident' }, (k) => k.type === 'incident'],
    ['assignee', { assignee: 'agent-1' }, (k) => k.assignee === 'agent-1'],
    ['tag, case-insensitively', { tag: 'OUTAGE' }, (k) => k.tags.includes('outage')],
    ['overdue=true', { overdue: 'true' }, (k) => k.overdue],
    ['overdue=false', { overdue: 'false' }, (k) => !k.overdue],
    ['q in the subject', { q: 'internet' }, (k) => text(k).includes('internet')],
    ['q in the description', { q: 'fiber' }, (k) => text(k).includes('fiber')],
    ['q with a literal %', { q: '50%' }, (k) => text(k).includes('50%')],
    ['q with a literal _', { q: '50_' }, (k) => text(k).includes('50_')],
    ['q with a literal _ in the subject', { q: 'slow_' }, (k) => text(k).includes('slow_')],
    [
      'status and priority',
      { status: 'open,new', priority: 'low' },
      (k) => ['open', 'new'].includes(k.status) && k.priority === 'low',
    ],
    [
      'tag and overdue',
      { tag: 'billing', overdue: 'false' },
      (k) => k.tags.includes('billing') && !k.overdue,
    ],
  ];

  it.each(CASES)('GET /tickets by %s', async (_name, query, keep) => {
    const want = expected(keep);
    expect(want.length).toBeGreaterThan(0);
    sameSet(await walk('/api/v1/tickets', query), want);
  });

  it('GET /tickets by subscriber_id', async () => {
    sameSet(
      await walk('/api/v1/tickets', { subscriber_id: subscribers[1] }),
      expected((k) => k.subscriber === 1),
    );
  });

  it('GET /tickets by a created range', async () => {
    const sorted = [...known].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    const from = sorted[5].createdAt;
    const to = sorted[20].createdAt;
    sameSet(
      await walk('/api/v1/tickets', { created_gte: from, created_lt: to }),
      expected((k) => k.createdAt >= from && k.createdAt < to),
    );
  });

  it("GET /subscribers/{id}/tickets answers that subscriber's tickets, with the same filters", async () => {
    const path = `/api/v1/subscribers/${subscribers[0]}/tickets`;
    sameSet(
      await walk(path, {}),
      expected((k) => k.subscriber === 0),
    );
    sameSet(
      await walk(path, { status: 'new,open,resolved' }),
      expected((k) => k.subscriber === 0 && ['new', 'open', 'resolved'].includes(k.status)),
    );
    const res = await request(t.http).get('/api/v1/subscribers/sub_unknown/tickets').set(bearer(desk.token));
    expectError(res, 404, 'not_found');
  });

  it('should mark overdue on every read, list or single', async () => {
    const overdue = known.find((k) => k.overdue)!;
    const single = await request(t.http).get(`/api/v1/tickets/${overdue.id}`).set(bearer(desk.token));
    expect(single.body.data.overdue).toBe(true);
    // Ticket 25 is resolved and its SLA lapsed: a resolved ticket is never overdue.
    const resolvedLapsed = known[25];
    expect(resolvedLapsed.status).toBe('resolved');
    const lapsedAt = await t.dataSource.query('SELECT due_at < now() AS lapsed FROM tickets WHERE id = $1', [
      resolvedLapsed.id,
    ]);
    expect(lapsedAt[0].lapsed).toBe(true);
    const res = await request(t.http).get(`/api/v1/tickets/${resolvedLapsed.id}`).set(bearer(desk.token));
    expect(res.body.data.overdue).toBe(false);
  });

  it.each([
    [{ status: 'bogus' }, 'invalid_query', 'status'],
    [{ status: 'new,bogus' }, 'invalid_query', 'status'],
    [{ status: '' }, 'invalid_query', 'status'],
    [{ priority: 'x' }, 'invalid_query', 'priority'],
    [{ type: 'rant' }, 'invalid_query', 'type'],
    [{ overdue: 'yes' }, 'invalid_query', 'overdue'],
    [{ q: '' }, 'invalid_query', 'q'],
    [{ q: 'q'.repeat(201) }, 'invalid_query', 'q'],
    [{ tag: 't'.repeat(51) }, 'invalid_query', 'tag'],
    [{ limit: '0' }, 'invalid_query', 'limit'],
    [{ created_gte: 'yesterday' }, 'invalid_query', 'created_gte'],
    [{ colour: 'red' }, 'invalid_query', 'colour'],
    [{ starting_after: 'not-a-cursor' }, 'invalid_cursor', 'starting_after'],
  ])('should refuse %j with 400', async (query, code, field) => {
    const res = await request(t.http).get('/api/v1/tickets').query(query).set(bearer(desk.token));
    expectError(res, 400, code, field);
  });
});
