import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import 'reflect-metadata';
import type { EntityManager } from 'typeorm';
import { LedgerRepository } from '../src/billing/ledger/ledger.repository';
import { encodeCursor, encodeRankCursor, PageQueryDto } from '../src/common/pagination';
import { SqlParams } from '../src/database/sql-params';
import { EventRecord } from '../src/events/event.entity';
import { EventsRepository } from '../src/events/events.repository';
import { claimCte, IdempotencyRepository } from '../src/gateway/idempotency/idempotency.repository';
import { IDEMPOTENCY_TTL_MS } from '../src/gateway/idempotency/idempotency.service';
import { ProvisioningOrdersRepository } from '../src/provisioning/provisioning-orders.repository';
import { Subscriber } from '../src/subscribers/subscriber.entity';
import { SubscriberStatus } from '../src/subscribers/subscriber-status';
import { SubscribersRepository } from '../src/subscribers/subscribers.repository';
import { SubscriberSearchRepository } from '../src/subscribers/subscriber-search.repository';
import { pppoeUsernameSearch } from '../src/provisioning/services.repository';
import { TicketPriority, TicketStatus, TicketType } from '../src/tickets/ticket-status';
import { Ticket, TicketStatusChange } from '../src/tickets/ticket.entity';
import { TicketsRepository } from '../src/tickets/tickets.repository';
import { DELIVERIES_FAN_OUT } from '../src/webhooks/webhook-deliveries.repository';
import { NOTIFICATIONS_FAN_OUT } from '../src/notifications/notifications.repository';

/**
 * `npm run sql:snapshots` writes the SQL of the hot statements to docs/sql/<repository>.sql, so a reviewer sees a
 * query change in the diff (docs/architecture.md, "Data mechanisms"); `npm run sql:snapshots -- --check` (CI's house
 * rules) fails when the committed files differ from what the code builds now.
 *
 * Every statement is built by the real code: each repository method runs against a recording EntityManager, which
 * answers one row and keeps the statement, its prepared name and its parameter count, as `pg` would be handed them
 * (preparedQuery's pool query, or manager.query). Only the text is written, never the values, so the files change when
 * the SQL does and not with the sample data.
 */
const OUTPUT = join(__dirname, '..', 'docs', 'sql');

interface Recorded {
  name: string | null;
  text: string;
  values: unknown[];
}

/** An EntityManager as far as preparedQuery and manager.query go: it records the statement and answers one row. */
function recordingManager(recorded: Recorded[]): EntityManager {
  const row = {
    deliveries: 0,
    items: '[]',
    has_more: false,
    cursor_at: null,
    cursor_id: null,
    cursor_rank: null,
  };
  const connection = {
    driver: {
      master: {
        query: (config: { name?: string; text: string; values: unknown[] }) => {
          recorded.push({ name: config.name ?? null, text: config.text, values: config.values });
          return Promise.resolve({ rows: [row] });
        },
      },
    },
  };
  const manager = {
    queryRunner: undefined,
    connection,
    query: (text: string, values: unknown[] = []) => {
      recorded.push({ name: null, text, values });
      return Promise.resolve([row]);
    },
  };
  return manager as unknown as EntityManager;
}

/** One statement of a file: what builds it, and the call that does. */
interface Sample {
  title: string;
  run: (manager: EntityManager) => Promise<unknown>;
  /** A rendered list's prepared name is numbered per process (`<list>_<n>`): written without its number. */
  numberedName?: boolean;
}

const TENANT = 'ten_01JD3Z6W3R4T5Y6U7I8O9P0QAB';
const AT = new Date('2026-01-15T10:00:00.000Z');

function page(fields: Partial<PageQueryDto> = {}): PageQueryDto {
  return Object.assign(new PageQueryDto(), fields);
}

function subscriber(): Subscriber {
  return Object.assign(new Subscriber(), {
    tenantId: TENANT,
    id: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    externalId: 'crm-1',
    fullName: 'Ada Lovelace',
    email: 'ada@example.com',
    emailNormalized: 'ada@example.com',
    phone: null,
    status: SubscriberStatus.Active,
    suspensionReason: null,
    billingProfileId: null,
    address: null,
    metadata: {},
    createdAt: AT,
    updatedAt: AT,
    taxExempt: false,
    taxExemptReason: null,
    taxId: null,
  });
}

function ticket(): Omit<Ticket, 'number'> {
  return Object.assign(new Ticket(), {
    tenantId: TENANT,
    id: 'tkt_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    subject: 'No sync since the storm',
    description: null,
    type: TicketType.Incident,
    priority: TicketPriority.High,
    status: TicketStatus.New,
    subscriberId: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    assignee: null,
    tags: ['fiber'],
    externalId: null,
    metadata: {},
    dueAt: AT,
    firstResponseAt: null,
    resolvedAt: null,
    closedAt: null,
    createdAt: AT,
    updatedAt: AT,
  });
}

function ticketCreated(): TicketStatusChange {
  return Object.assign(new TicketStatusChange(), {
    tenantId: TENANT,
    id: 'tsc_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    ticketId: 'tkt_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    fromStatus: null,
    toStatus: TicketStatus.New,
    reason: null,
    actor: { type: 'token', id: 'tok_1' },
    createdAt: AT,
  });
}

function event(type: string, object: object = {}): EventRecord {
  return Object.assign(new EventRecord(), {
    tenantId: TENANT,
    id: 'evt_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    type,
    subjectId: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    data: { object },
    requestId: 'req_1',
    actor: { type: 'token', id: 'tok_1' },
    createdAt: AT,
  });
}

function samples(): Record<string, Sample[]> {
  const events = new EventsRepository();
  events.useFanOut(DELIVERIES_FAN_OUT);
  events.useFanOut(NOTIFICATIONS_FAN_OUT);
  const subscribers = new SubscribersRepository(events);
  const tickets = new TicketsRepository(events);
  const search = new SubscriberSearchRepository();
  search.useSource(pppoeUsernameSearch);
  const keys = new IdempotencyRepository();
  const scope = { tenantId: TENANT, tokenId: 'tok_1', key: 'key-1' };
  const cursor = encodeCursor(AT, 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB');
  return {
    'subscribers.repository': [
      {
        title: 'SubscribersRepository.findById: GET /subscribers/{id}',
        run: (m) => subscribers.findById(m, TENANT, 'sub_1'),
      },
      {
        title: 'SubscribersRepository.update: PATCH /subscribers/{id}, a status change',
        run: (m) => subscribers.update(m, subscriber()),
      },
      {
        title:
          'SubscribersRepository.insertWithEvent: POST /subscribers, the subscriber, its event and its deliveries',
        run: (m) => subscribers.insertWithEvent(m, subscriber(), event('subscriber.created'), null),
      },
      {
        title:
          'SubscribersRepository.insertWithEvent: POST /subscribers with an Idempotency-Key, its claim in the statement',
        run: (m) =>
          subscribers.insertWithEvent(m, subscriber(), event('subscriber.created'), {
            ctes: (params: SqlParams) =>
              claimCte(params, {
                scope,
                fingerprint: 'f'.repeat(64),
                ttlMs: IDEMPOTENCY_TTL_MS,
                answer: { status: 201, body: {} },
              }),
          }),
      },
      {
        title: 'SubscribersRepository.page: GET /subscribers',
        run: (m) => subscribers.page(m, TENANT, {}, page()),
        numberedName: true,
      },
      {
        title: 'SubscribersRepository.page: GET /subscribers?status=',
        run: (m) => subscribers.page(m, TENANT, { statuses: [SubscriberStatus.Suspended] }, page()),
        numberedName: true,
      },
      {
        title: 'SubscribersRepository.page: GET /subscribers?external_id=',
        run: (m) => subscribers.page(m, TENANT, { externalId: 'crm-1' }, page()),
        numberedName: true,
      },
      {
        title: 'SubscribersRepository.page: GET /subscribers?email=',
        run: (m) => subscribers.page(m, TENANT, { emailNormalized: 'ada@example.com' }, page()),
        numberedName: true,
      },
      {
        title:
          'SubscribersRepository.page: GET /subscribers?status=a,b&external_id=&email=&phone=&created_gte=&created_lt=&starting_after= (every filter)',
        run: (m) =>
          subscribers.page(
            m,
            TENANT,
            {
              statuses: [SubscriberStatus.Active, SubscriberStatus.Suspended],
              externalId: 'crm-1',
              emailNormalized: 'ada@example.com',
              phone: '+14155550123',
            },
            page({
              created_gte: '2026-01-01T00:00:00.000Z',
              created_lt: '2026-02-01T00:00:00.000Z',
              starting_after: cursor,
            }),
          ),
        numberedName: true,
      },
    ],
    'events.repository': [
      {
        title: 'EventsRepository.append: an event and its webhook deliveries (the outbox)',
        run: (m) => events.append(m, event('subscriber.updated'), true),
      },
      {
        title:
          'EventsRepository.append: an event that notifies a subscriber, its deliveries and its notification',
        run: (m) =>
          events.append(m, event('invoice.finalized', { id: 'inv_1', subscriber_id: 'sub_1' }), true),
      },
      {
        title: 'EventsRepository.append: an event alone (a webhook test ping; every event in the CLI)',
        run: (m) => events.append(m, event('webhook.test'), false),
      },
      {
        title: 'EventsRepository.page: GET /events',
        run: (m) => events.page(m, TENANT, Object.assign(page(), {})),
        numberedName: true,
      },
      {
        title: 'EventsRepository.page: GET /events?type=subscriber.*&subject_id=',
        run: (m) =>
          events.page(m, TENANT, Object.assign(page(), { type: ['subscriber.*'], subject_id: 'sub_1' })),
        numberedName: true,
      },
      {
        title: 'EventsRepository.page: GET /events?type=subscriber.*,invoice.paid',
        run: (m) => events.page(m, TENANT, Object.assign(page(), { type: ['subscriber.*', 'invoice.paid'] })),
        numberedName: true,
      },
    ],
    'idempotency.repository': [
      {
        title: 'IdempotencyRepository.claim: a POST with an Idempotency-Key, claimed before its effect',
        run: (m) => keys.claim(m, scope, 'f'.repeat(64), IDEMPOTENCY_TTL_MS),
      },
    ],
    'ledger.repository': [
      {
        title: 'LedgerRepository.page: GET /subscribers/{id}/ledger',
        run: (m) => new LedgerRepository().page(m, TENANT, 'sub_1', page()),
        numberedName: true,
      },
    ],
    'subscriber-search.repository': [
      {
        title:
          'SubscriberSearchRepository.page: GET /subscribers?q= (with the PPPoE usernames provisioning hands in)',
        run: (m) => search.page(m, TENANT, { text: 'ada', e164: null, phoneDigits: null }, {}, page()),
      },
      {
        title:
          'SubscriberSearchRepository.page: GET /subscribers?q=Subscriber 4711, only the rare word through the index',
        run: (m) =>
          search.page(
            m,
            TENANT,
            { text: 'Subscriber 4711', e164: null, phoneDigits: null, rareWords: ['4711'] },
            {},
            page(),
          ),
      },
      {
        title:
          'SubscriberSearchRepository.page: GET /subscribers?q=+1 415 555 0123&status=a,b&starting_after=',
        run: (m) =>
          search.page(
            m,
            TENANT,
            { text: '+1 415 555 0123', e164: '+14155550123', phoneDigits: '14155550123' },
            { statuses: [SubscriberStatus.Active, SubscriberStatus.Suspended] },
            page({ starting_after: encodeRankCursor(10_950, 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB') }),
          ),
      },
    ],
    'tickets.repository': [
      {
        title:
          'TicketsRepository.insertNumbered: POST /tickets, the number, the ticket, its first status change, its event and deliveries',
        run: (m) => tickets.insertNumbered(m, ticket(), ticketCreated(), event('ticket.created')),
      },
      {
        title: 'TicketsRepository.page: GET /tickets',
        run: (m) => tickets.page(m, TENANT, {}, page()),
        numberedName: true,
      },
    ],
    'provisioning-orders.repository': [
      {
        title: 'ProvisioningOrdersRepository.page: GET /provisioning-orders',
        run: (m) => new ProvisioningOrdersRepository().page(m, TENANT, {}, page()),
        numberedName: true,
      },
    ],
  };
}

/** How a statement runs: prepared under its name, or planned for its values on each call. */
function describe(recorded: Recorded, sample: Sample): string {
  if (recorded.name === null) {
    return 'not prepared: planned for its values on each call';
  }
  const name = sample.numberedName ? recorded.name.replace(/_\d+$/, '_<n>') : recorded.name;
  return `prepared as ${name}`;
}

async function render(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const [file, list] of Object.entries(samples())) {
    const parts = [
      `-- Generated by scripts/sql-snapshots.ts (npm run sql:snapshots) from src/**/${file}.ts: do not edit.`,
    ];
    for (const sample of list) {
      const recorded: Recorded[] = [];
      await sample.run(recordingManager(recorded));
      if (recorded.length !== 1) {
        throw new Error(`${sample.title}: ran ${recorded.length} statements, not one`);
      }
      const [statement] = recorded;
      parts.push(
        '',
        `-- ${sample.title}`,
        `-- ${describe(statement, sample)}; ${statement.values.length} parameter(s)`,
        `${statement.text.trim()};`,
      );
    }
    files.set(`${file}.sql`, `${parts.join('\n')}\n`);
  }
  return files;
}

async function main(): Promise<void> {
  const files = await render();
  if (!process.argv.includes('--check')) {
    rmSync(OUTPUT, { recursive: true, force: true });
    mkdirSync(OUTPUT, { recursive: true });
    for (const [name, text] of files) {
      writeFileSync(join(OUTPUT, name), text);
    }
    process.stdout.write(`Wrote ${files.size} files to docs/sql/\n`);
    return;
  }
  let committed: string[] = [];
  try {
    committed = readdirSync(OUTPUT).filter((name) => name.endsWith('.sql'));
  } catch {
    // no folder: every file is missing
  }
  const stale = [
    ...[...files].filter(([name, text]) => {
      try {
        return readFileSync(join(OUTPUT, name), 'utf8') !== text;
      } catch {
        return true;
      }
    }),
  ].map(([name]) => name);
  const extra = committed.filter((name) => !files.has(name));
  if (stale.length === 0 && extra.length === 0) {
    process.stdout.write(`docs/sql/ is up to date (${files.size} files).\n`);
    return;
  }
  process.stderr.write(
    `docs/sql/ differs from the SQL the code builds (${[...stale, ...extra.map((name) => `${name} (no longer built)`)].join(', ')}): ` +
      'run `npm run sql:snapshots` and commit the result.\n',
  );
  process.exitCode = 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
