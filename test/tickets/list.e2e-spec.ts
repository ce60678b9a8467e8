import request from 'supertest';
import { expectError, expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import { createSubscriber, SUBSCRIBER_SCOPES } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import {
  createTicket,
  makeOverdue,
  postTicketStatus,
  TICKET_ID,
  TICKET_KEYS,
  TICKET_SCOPES,
} from '../support/ticket-factory';

type Status = 'new' | 'open' | 'pending_customer' | 'on_hold' | 'resolved' | 'closed' | 'cancelled';

const STATUSES: Status[] = ['new', 'open', 'pending_customer', 'on_hold', 'resolved', 'closed', 'cancelled'];
const PRIORITIES = ['low', 'normal', 'high', 'urgent'];
const TYPES = ['incident', 'problem', 'question', 'task', 'installation', 'billing'];
/** The states where the SLA has stopped: such a ticket is never overdue, whatever its due_at. */
const STOPPED: Status[] = ['resolved', 'closed', 'cancelled'];

/** Moves through allowed transitions (POST /status) from `new`; two ways to `open` so a reopened ticket is in it. */
const PATHS: Record<Status, Status[][]> = {
  new: [[]],
  open: [['open'], ['open', 'pending_customer', 'open'], ['open', 'resolved', 'open']],
  pending_customer: [['open', 'pending_customer']],
  on_hold: [['open', 'on_hold']],
  resolved: [
    ['open', 'resolved'],
    ['open', 'on_hold', 'resolved'],
  ],
  closed: [['open', 'resolved', 'closed']],
  cancelled: [['cancelled'], ['open', 'pending_customer', 'cancelled']],
};

/** Subjects and descriptions in mixed case, some with a literal % or _ and some with what a wildcard would match. */
const SUBJECTS = [
  'No Internet since Monday',
  'Speed capped at 50% of the plan',
  'Invoice shows 500 EUR',
  'DNS fails on host my_router',
  'Modem LED blinks RED',
  'Wi-Fi drops in the evening',
  'Upgrade to the 1000 plan',
  'Router reboots every hour',
];
/** Eleven, so that no description follows the status, type, subscriber or priority slot. */
const DESCRIPTIONS: (string | null)[] = [
  null,
  'Customer reports the INTERNET is down again',
  'Line to myXrouter flaps; loss at 5000 ms',
  'Measured LOSS of 50% on the uplink',
  'Asked for a 500 Mbit/s line',
  'Pays by card; ref pay_ref_7',
  'Nothing special',
  'Fibre LOSS light is on',
  null,
  'Called twice; Internet back after reboot',
  'Billing address changed',
];
const ASSIGNEES = [null, 'noc.jane', 'noc.Jane', 'noc.jane.doe', 'billing.bob'];
/** Five sets (coprime with the three subscriber slots), mixed case, a duplicate, and `outages` next to `outage`. */
const TAG_SETS: string[][] = [
  ['Outage', 'Fiber'],
  ['billing', 'outages'],
  [],
  ['OUTAGE', 'street-9', 'outage'],
  ['vip', 'Billing', 'fiber'],
];

/** One fixture ticket as the test built it, from which each filter's expected answer is computed. */
interface Known {
  id: string;
  status: Status;
  priority: string;
  type: string;
  subscriberId: string | null;
  assignee: string | null;
  tags: string[];
  subject: string;
  description: string | null;
  lapsed: boolean;
  overdue: boolean;
  createdAt: string;
}

type Keep = (k: Known) => boolean;

interface ListItem {
  id: string;
  created_at: string;
  status: string;
  priority: string;
  type: string;
  subscriber_id: string | null;
  overdue: boolean;
  tags: string[];
}

const text = (k: Known) => `${k.subject}\n${k.description ?? ''}`.toLowerCase();

/** A well-formed subscriber id nobody has. */
const UNKNOWN_SUBSCRIBER = 'sub_00000000000000000000000000';

/** Issue: GET /tickets and GET /subscribers/{id}/tickets, every filter alone and combined, walked page by page. */
describe('Tickets: list filters and pagination', () => {
  let t: TestApp;
  let desk: TenantWithToken;
  let other: TenantWithToken;
  let subA: string;
  let subB: string;
  let subIdle: string;
  let otherSubscriber: string;
  const known: Known[] = [];
  const byId = new Map<string, Known>();

  /**
   * Every id the list answers for `query`, walking it `limit` at a time: checks each item's shape and agreement with
   * the fixture, strict newest-first order by (created_at, id) across pages, full pages while has_more, and the last
   * page's has_more false with next_cursor null.
   */
  async function walk(path: string, query: Record<string, string>, limit = 3): Promise<string[]> {
    const ids: string[] = [];
    let previous: ListItem | null = null;
    let cursor: string | null = null;
    for (let page = 0; page < 60; page++) {
      const res = await request(t.http)
        .get(path)
        .query({ ...query, limit: String(limit), ...(cursor === null ? {} : { starting_after: cursor }) })
        .set(bearer(desk.token));
      expectList(res);
      const items = res.body.data as ListItem[];
      const pagination = res.body.meta.pagination as {
        limit: number;
        has_more: boolean;
        next_cursor: unknown;
      };
      expect(pagination.limit).toBe(limit);
      expect(items.length).toBeLessThanOrEqual(limit);
      for (const item of items) {
        expect(Object.keys(item).sort()).toEqual(TICKET_KEYS); // the contract's ticket object, without status_history
        expect(item.id).toMatch(TICKET_ID);
        const mine = byId.get(item.id);
        expect({ id: item.id, known: mine !== undefined }).toEqual({ id: item.id, known: true });
        expect({
          id: item.id,
          status: item.status,
          priority: item.priority,
          type: item.type,
          subscriber_id: item.subscriber_id,
          tags: item.tags,
          overdue: item.overdue,
        }).toEqual({
          id: mine!.id,
          status: mine!.status,
          priority: mine!.priority,
          type: mine!.type,
          subscriber_id: mine!.subscriberId,
          tags: mine!.tags,
          overdue: mine!.overdue,
        });
        // A search (q) answers best match first (test/tickets/search.e2e-spec.ts); every other list newest first.
        if (previous !== null && query.q === undefined) {
          const newerFirst =
            item.created_at < previous.created_at ||
            (item.created_at === previous.created_at && item.id < previous.id);
          expect({ after: previous.id, item: item.id, newerFirst }).toEqual({
            after: previous.id,
            item: item.id,
            newerFirst: true,
          });
        }
        previous = item;
        ids.push(item.id);
      }
      if (pagination.has_more) {
        expect(items.length).toBe(limit);
        expect(typeof pagination.next_cursor).toBe('string');
        cursor = pagination.next_cursor as string;
      } else {
        expect(pagination.next_cursor).toBeNull();
        return ids;
      }
    }
    throw new Error(`${path} ${JSON.stringify(query)}: more than 60 pages`);
  }

  /** The fixture's ids `keep` selects, newest first by (created_at, id). */
  function expected(keep: Keep): string[] {
    return known
      .filter(keep)
      .sort((a, b) =>
        a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt),
      )
      .map((k) => k.id);
  }

  /** The walked ids are exactly the expected ones: no repeat, no gap, nothing else (then in the expected order). */
  /** The same tickets, in the same order (newest first) unless `ranked`: a search's order is its rank's. */
  function expectSameIds(got: string[], want: string[], ranked = false): void {
    expect(got.length).toBe(new Set(got).size);
    expect([...got].sort()).toEqual([...want].sort());
    if (!ranked) {
      expect(got).toEqual(want);
    }
  }

  /** A filter that can fail both ways: it must keep some of the fixture and drop some. */
  function expectSelective(want: string[]): void {
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(known.length);
  }

  async function driveTo(id: string, moves: Status[]): Promise<void> {
    for (const to of moves) {
      const reason = to === 'on_hold' || to === 'cancelled' ? `moving to ${to}` : undefined;
      const res = await postTicketStatus(t, desk.token, id, to, reason);
      if (res.status !== 200 || res.body.data.status !== to) {
        throw new Error(`move ${id} to ${to}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
  }

  beforeAll(async () => {
    t = await startTestApp();
    desk = await createTenantWithToken(t, TICKET_SCOPES);
    other = await createTenantWithToken(t, TICKET_SCOPES);
    subA = (await createSubscriber(t, desk.token)).id;
    subB = (await createSubscriber(t, desk.token)).id;
    subIdle = (await createSubscriber(t, desk.token)).id;
    otherSubscriber = (await createSubscriber(t, other.token)).id;

    // Another tenant's tickets that every filter below would match: none of them may ever show up.
    for (let index = 0; index < 4; index++) {
      await createTicket(t, other.token, {
        subject: SUBJECTS[index],
        description: DESCRIPTIONS[index + 1],
        priority: PRIORITIES[index],
        tags: ['outage', 'billing'],
        assignee: 'noc.jane',
        subscriber_id: otherSubscriber,
      });
    }

    const paths: Partial<Record<Status, number>> = {};
    for (let index = 0; index < 40; index++) {
      const status = STATUSES[index % STATUSES.length];
      const choices = PATHS[status];
      const path = choices[(paths[status] = ((paths[status] ?? -1) + 1) % choices.length)];
      const type = TYPES[index % TYPES.length];
      const subscriberId = [subA, subB, null][index % 3];
      const assignee = ASSIGNEES[index % ASSIGNEES.length];
      const tags = TAG_SETS[index % TAG_SETS.length];
      const body: Record<string, unknown> = {
        subject: `${SUBJECTS[index % SUBJECTS.length]} (${index})`,
        priority: PRIORITIES[index % PRIORITIES.length],
        tags,
      };
      // `question` is the default: those tickets do not send a type.
      if (type !== 'question') {
        body.type = type;
      }
      const description = DESCRIPTIONS[index % DESCRIPTIONS.length];
      if (description !== null) {
        body.description = description;
      }
      if (subscriberId !== null) {
        body.subscriber_id = subscriberId;
      }
      if (assignee !== null) {
        body.assignee = assignee;
      }
      const ticket = await createTicket(t, desk.token, body);
      await driveTo(ticket.id, path);
      // Every fifth ticket's SLA lapsed an hour ago, among them resolved, closed and cancelled ones.
      const lapsed = index % 5 === 1;
      if (lapsed) {
        await makeOverdue(t, ticket.id);
      }
      const k: Known = {
        id: ticket.id,
        status,
        priority: body.priority as string,
        type,
        subscriberId,
        assignee,
        tags: [...new Set(tags.map((tag) => tag.toLowerCase()))],
        subject: body.subject as string,
        description,
        lapsed,
        overdue: lapsed && !STOPPED.includes(status),
        createdAt: ticket.created_at,
      };
      known.push(k);
      byId.set(k.id, k);
    }
  });

  afterAll(async () => {
    await t.close();
  });

  it('builds a fixture where every filter has something to keep and something to drop', () => {
    expect(known).toHaveLength(40);
    expect(new Set(known.map((k) => k.status))).toEqual(new Set(STATUSES));
    expect(known.filter((k) => k.overdue).length).toBeGreaterThan(1);
    // A lapsed SLA on a resolved ticket: it must not count as overdue.
    expect(known.some((k) => k.lapsed && k.status === 'resolved')).toBe(true);
    expect(known.some((k) => k.lapsed && k.status === 'closed')).toBe(true);
    expect(known.some((k) => k.lapsed && k.status === 'cancelled')).toBe(true);
  });

  describe('GET /api/v1/tickets', () => {
    const CASES: [string, Record<string, string>, Keep][] = [
      ['status (one)', { status: 'open' }, (k) => k.status === 'open'],
      ['status (a final one)', { status: 'cancelled' }, (k) => k.status === 'cancelled'],
      ['status=new,open', { status: 'new,open' }, (k) => ['new', 'open'].includes(k.status)],
      [
        'status=pending_customer,on_hold,resolved',
        { status: 'pending_customer,on_hold,resolved' },
        (k) => ['pending_customer', 'on_hold', 'resolved'].includes(k.status),
      ],
      ['priority', { priority: 'urgent' }, (k) => k.priority === 'urgent'],
      ['priority=low,high', { priority: 'low,high' }, (k) => ['low', 'high'].includes(k.priority)],
      ['type', { type: 'incident' }, (k) => k.type === 'incident'],
      ['type=question (the default)', { type: 'question' }, (k) => k.type === 'question'],
      ['type=billing,task', { type: 'billing,task' }, (k) => ['billing', 'task'].includes(k.type)],
      ['assignee (exact)', { assignee: 'noc.jane' }, (k) => k.assignee === 'noc.jane'],
      ['assignee (exact, case-sensitive)', { assignee: 'noc.Jane' }, (k) => k.assignee === 'noc.Jane'],
      ['tag', { tag: 'outage' }, (k) => k.tags.includes('outage')],
      ['tag in upper case', { tag: 'OUTAGE' }, (k) => k.tags.includes('outage')],
      ['tag in mixed case', { tag: 'BiLLing' }, (k) => k.tags.includes('billing')],
      ['overdue=true', { overdue: 'true' }, (k) => k.overdue],
      ['overdue=false', { overdue: 'false' }, (k) => !k.overdue],
      ['q in a subject', { q: 'reboots' }, (k) => text(k).includes('reboots')],
      ['q in a description only', { q: 'flaps' }, (k) => text(k).includes('flaps')],
      ['q in either, case-insensitive', { q: 'iNtErNeT' }, (k) => text(k).includes('internet')],
      ['q=50% (% literal, not 500)', { q: '50%' }, (k) => text(k).includes('50%')],
      ['q=% (only texts with a %)', { q: '%' }, (k) => text(k).includes('%')],
      ['q=my_router (_ literal, not myXrouter)', { q: 'my_router' }, (k) => text(k).includes('my_router')],
      ['q=_ (only texts with an _)', { q: '_' }, (k) => text(k).includes('_')],
      [
        'status and priority',
        { status: 'new,open', priority: 'normal' },
        (k) => ['new', 'open'].includes(k.status) && k.priority === 'normal',
      ],
      [
        'tag and overdue=false',
        { tag: 'Fiber', overdue: 'false' },
        (k) => k.tags.includes('fiber') && !k.overdue,
      ],
      [
        'q and status',
        { q: 'LOSS', status: 'open,resolved,closed' },
        (k) => text(k).includes('loss') && ['open', 'resolved', 'closed'].includes(k.status),
      ],
      [
        'assignee and type',
        { assignee: 'noc.jane', type: 'incident,problem,question' },
        (k) => k.assignee === 'noc.jane' && ['incident', 'problem', 'question'].includes(k.type),
      ],
      [
        'overdue=true and priority',
        { overdue: 'true', priority: 'normal,high' },
        (k) => k.overdue && ['normal', 'high'].includes(k.priority),
      ],
    ];

    it.each(CASES)('filters by %s', async (_name, query, keep) => {
      const want = expected(keep);
      expectSelective(want);
      expectSameIds(await walk('/api/v1/tickets', query), want, query.q !== undefined);
    });

    it('answers every ticket of the tenant, and only those, without a filter', async () => {
      expectSameIds(
        await walk('/api/v1/tickets', {}),
        expected(() => true),
      );
    });

    it('walks the same list whatever the page size', async () => {
      const want = expected(() => true);
      expectSameIds(await walk('/api/v1/tickets', {}, 1), want);
      expectSameIds(await walk('/api/v1/tickets', {}, 40), want);
      expectSameIds(await walk('/api/v1/tickets', {}, 100), want);
    });

    it('filters by subscriber_id, alone and with status', async () => {
      const want = expected((k) => k.subscriberId === subB);
      expectSelective(want);
      expectSameIds(await walk('/api/v1/tickets', { subscriber_id: subB }), want);
      const both = expected((k) => k.subscriberId === subA && ['new', 'open'].includes(k.status));
      expectSelective(both);
      expectSameIds(await walk('/api/v1/tickets', { subscriber_id: subA, status: 'new,open' }), both);
    });

    it('answers an empty last page for a subscriber_id without tickets, unknown or of another tenant', async () => {
      for (const subscriberId of [subIdle, UNKNOWN_SUBSCRIBER, otherSubscriber]) {
        expect(await walk('/api/v1/tickets', { subscriber_id: subscriberId })).toEqual([]);
      }
    });

    it('counts overdue=true and overdue=false as complements among the tenant tickets', async () => {
      const overdue = await walk('/api/v1/tickets', { overdue: 'true' });
      const running = await walk('/api/v1/tickets', { overdue: 'false' });
      expect(overdue.filter((id) => running.includes(id))).toEqual([]);
      expect([...overdue, ...running].sort()).toEqual(known.map((k) => k.id).sort());
    });

    it('never counts a resolved ticket whose SLA lapsed as overdue, in the list or in the filter', async () => {
      const resolved = known.find((k) => k.lapsed && k.status === 'resolved')!;
      const rows: { lapsed: boolean }[] = await t.dataSource.query(
        'SELECT due_at < now() AS lapsed FROM tickets WHERE id = $1',
        [resolved.id],
      );
      expect(rows[0].lapsed).toBe(true);
      expect(await walk('/api/v1/tickets', { overdue: 'true' })).not.toContain(resolved.id);
      expect(await walk('/api/v1/tickets', { overdue: 'false' })).toContain(resolved.id);
      const page = await request(t.http)
        .get('/api/v1/tickets')
        .query({ status: 'resolved', limit: '100' })
        .set(bearer(desk.token));
      expectList(page);
      const item = (page.body.data as ListItem[]).find((row) => row.id === resolved.id);
      expect(item?.overdue).toBe(false);
    });

    it('matches q=50% only where the text has "50%", never "500" or "5000"', async () => {
      const got = await walk('/api/v1/tickets', { q: '50%' });
      const wildcard = known.filter((k) => /50.*/.test(text(k)) && !text(k).includes('50%'));
      expect(wildcard.length).toBeGreaterThan(0);
      for (const k of wildcard) {
        expect(got).not.toContain(k.id);
      }
      expect(got.length).toBeGreaterThan(0);
    });

    it('answers a q of exactly 200 characters (no match) and an unmatched q with an empty list', async () => {
      expect(await walk('/api/v1/tickets', { q: 'x'.repeat(200) })).toEqual([]);
      expect(await walk('/api/v1/tickets', { q: 'my%router' })).toEqual([]);
      expect(await walk('/api/v1/tickets', { tag: 'outag' })).toEqual([]);
    });

    describe('created_gte and created_lt', () => {
      let ordered: Known[];
      beforeAll(() => {
        ordered = [...known].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      });

      it('created_gte keeps the tickets created at or after the instant (inclusive)', async () => {
        const from = ordered[12].createdAt;
        const want = expected((k) => k.createdAt >= from);
        expectSelective(want);
        const got = await walk('/api/v1/tickets', { created_gte: from });
        expect(got).toContain(ordered[12].id);
        expectSameIds(got, want);
      });

      it('created_lt keeps the tickets created before the instant (exclusive)', async () => {
        const to = ordered[25].createdAt;
        const want = expected((k) => k.createdAt < to);
        expectSelective(want);
        const got = await walk('/api/v1/tickets', { created_lt: to });
        expect(got).not.toContain(ordered[25].id);
        expectSameIds(got, want);
      });

      it('both make a half-open range, also combined with another filter', async () => {
        const from = ordered[5].createdAt;
        const to = ordered[30].createdAt;
        const want = expected((k) => k.createdAt >= from && k.createdAt < to);
        expectSelective(want);
        expectSameIds(await walk('/api/v1/tickets', { created_gte: from, created_lt: to }), want);
        const urgent = expected((k) => k.createdAt >= from && k.createdAt < to && k.priority === 'urgent');
        expectSelective(urgent);
        expectSameIds(
          await walk('/api/v1/tickets', { created_gte: from, created_lt: to, priority: 'urgent' }),
          urgent,
        );
      });

      it('reads an instant written with an offset as the same instant', async () => {
        const from = ordered[20].createdAt;
        const shifted = new Date(Date.parse(from) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
        expectSameIds(
          await walk('/api/v1/tickets', { created_gte: shifted }),
          expected((k) => k.createdAt >= from),
        );
      });
    });
  });

  describe('GET /api/v1/subscribers/{id}/tickets', () => {
    it("answers exactly that subscriber's tickets, page by page", async () => {
      for (const subscriberId of [subA, subB]) {
        const want = expected((k) => k.subscriberId === subscriberId);
        expectSelective(want);
        expectSameIds(await walk(`/api/v1/subscribers/${subscriberId}/tickets`, {}), want);
      }
    });

    const SUB_CASES: [string, Record<string, string>, Keep][] = [
      ['status=new,open', { status: 'new,open' }, (k) => ['new', 'open'].includes(k.status)],
      ['priority', { priority: 'high,urgent' }, (k) => ['high', 'urgent'].includes(k.priority)],
      ['type', { type: 'incident,question' }, (k) => ['incident', 'question'].includes(k.type)],
      ['assignee', { assignee: 'noc.jane' }, (k) => k.assignee === 'noc.jane'],
      ['tag', { tag: 'Outage' }, (k) => k.tags.includes('outage')],
      ['overdue=true', { overdue: 'true' }, (k) => k.overdue],
      ['overdue=false', { overdue: 'false' }, (k) => !k.overdue],
      ['q', { q: 'LOSS' }, (k) => text(k).includes('loss')],
      ['q with a literal %', { q: '50%' }, (k) => text(k).includes('50%')],
      [
        'status and tag',
        { status: 'open,resolved,closed,cancelled', tag: 'billing' },
        (k) => ['open', 'resolved', 'closed', 'cancelled'].includes(k.status) && k.tags.includes('billing'),
      ],
    ];

    it.each(SUB_CASES)('filters by %s within the subscriber', async (_name, query, keep) => {
      const mine = (k: Known) => k.subscriberId === subA && keep(k);
      const want = expected(mine);
      expect(want.length).toBeGreaterThan(0);
      // The filter drops some of the subscriber's tickets and the route drops other subscribers' matches.
      expect(want.length).toBeLessThan(expected((k) => k.subscriberId === subA).length);
      expect(expected(keep).length).toBeGreaterThan(want.length);
      expectSameIds(await walk(`/api/v1/subscribers/${subA}/tickets`, query), want, query.q !== undefined);
    });

    it('filters by a created range within the subscriber', async () => {
      const ordered = [...known].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      const from = ordered[8].createdAt;
      const to = ordered[33].createdAt;
      const want = expected((k) => k.subscriberId === subB && k.createdAt >= from && k.createdAt < to);
      expect(want.length).toBeGreaterThan(0);
      expectSameIds(
        await walk(`/api/v1/subscribers/${subB}/tickets`, { created_gte: from, created_lt: to }),
        want,
      );
    });

    it('answers an empty list for a subscriber of the tenant without tickets', async () => {
      expect(await walk(`/api/v1/subscribers/${subIdle}/tickets`, {})).toEqual([]);
    });

    it('answers 404 not_found for an unknown subscriber and for another tenant one', async () => {
      for (const id of [UNKNOWN_SUBSCRIBER, otherSubscriber]) {
        const res = await request(t.http).get(`/api/v1/subscribers/${id}/tickets`).set(bearer(desk.token));
        expectError(res, 404, 'not_found');
      }
    });

    it('refuses bad parameters with 400 as the tickets list does', async () => {
      const path = `/api/v1/subscribers/${subA}/tickets`;
      const status = await request(t.http).get(path).query({ status: 'bogus' }).set(bearer(desk.token));
      expectError(status, 400, 'invalid_query', 'status');
      const cursor = await request(t.http)
        .get(path)
        .query({ starting_after: 'nope' })
        .set(bearer(desk.token));
      expectError(cursor, 400, 'invalid_cursor', 'starting_after');
    });
  });

  describe('bad parameters', () => {
    it.each<[Record<string, string>, string]>([
      [{ status: 'bogus' }, 'status'],
      [{ status: 'new,bogus' }, 'status'],
      [{ priority: 'x' }, 'priority'],
      [{ priority: 'high,x' }, 'priority'],
      [{ type: 'rant' }, 'type'],
      [{ overdue: 'yes' }, 'overdue'],
      [{ overdue: '1' }, 'overdue'],
      [{ limit: '0' }, 'limit'],
      [{ limit: '101' }, 'limit'],
      [{ limit: 'ten' }, 'limit'],
      [{ q: 'q'.repeat(201) }, 'q'],
      [{ created_gte: 'yesterday' }, 'created_gte'],
      [{ created_lt: '2026-13-45' }, 'created_lt'],
      [{ colour: 'red' }, 'colour'],
      [{ sort: 'created_at' }, 'sort'],
    ])('refuses %j with 400 invalid_query naming the parameter', async (query, field) => {
      const res = await request(t.http).get('/api/v1/tickets').query(query).set(bearer(desk.token));
      expectError(res, 400, 'invalid_query', field);
    });

    it.each([
      'not-a-cursor',
      Buffer.from('["yesterday","tkt_x"]').toString('base64url'),
      Buffer.from('{"id":"tkt_x"}').toString('base64url'),
    ])('refuses starting_after=%s with 400 invalid_cursor', async (cursor) => {
      const res = await request(t.http)
        .get('/api/v1/tickets')
        .query({ starting_after: cursor })
        .set(bearer(desk.token));
      expectError(res, 400, 'invalid_cursor', 'starting_after');
    });
  });

  describe('scopes', () => {
    it('needs tickets:read on both lists', async () => {
      const reader = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      const subscriber = (await createSubscriber(t, reader.token)).id;
      for (const path of ['/api/v1/tickets', `/api/v1/subscribers/${subscriber}/tickets`]) {
        const res = await request(t.http).get(path).set(bearer(reader.token));
        expectError(res, 403, 'insufficient_scope');
      }
    });
  });
});
