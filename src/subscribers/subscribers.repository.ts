import { Injectable } from '@nestjs/common';
import { EntityManager, Not } from 'typeorm';
import type { RenderedPage } from '../common/envelope/envelope';
import type { ClaimInStatement } from '../common/request-context';
import { type PageQueryDto } from '../common/pagination';
import {
  type Condition,
  type CsvPage,
  csvTextSql,
  isoTimestampSql,
  oneOf,
  type RenderedCsv,
  renderedCsvPage,
  type RenderedList,
  renderedPage,
} from '../database/rendered-page';
import { entityColumns, recordsetInsert } from '../database/entity-columns';
import { lockForUpdate } from '../database/lock-for-update';
import { preparedQuery, type PreparedStatement } from '../database/prepared-query';
import { SqlParams } from '../database/sql-params';
import { EventsRepository, type EventRecord } from '../events';
import { SubscriberStatus } from './subscriber-status';
import { Subscriber } from './subscriber.entity';

/** The one definition of the table's columns: the entity's, in its order (a new column shows up here by itself). */
const COLUMNS = entityColumns(Subscriber);
const COLUMN_LIST = COLUMNS.map(({ column }) => column).join(', ');
/** Set by an update: every column but the row's key and its creation time. */
const UPDATED = COLUMNS.filter(({ property }) => !['tenantId', 'id', 'createdAt'].includes(property));

/** A new subscriber's INSERT, its values added to `params` in the order of the entity's columns. */
function insertSubscriber(params: SqlParams, subscriber: Subscriber): string {
  return `INSERT INTO subscribers (${COLUMN_LIST}) VALUES (${params.list(subscriberParams(subscriber))})`;
}

/** The same INSERT alone, parameters `$1`… in the order of the entity's columns (bench/baseline-insert.ts). */
export const INSERT_SUBSCRIBER = insertSubscriber(new SqlParams(), new Subscriber());

/** An import's batch of new subscribers: one statement, one parameter. */
const INSERT_MANY = recordsetInsert(Subscriber, 'subscribers');

/** An import's batch: the tenant's subscribers with these external ids, row-locked in id order. */
const BY_EXTERNAL_IDS = `SELECT ${COLUMN_LIST} FROM subscribers WHERE tenant_id = $1 AND external_id = ANY($2::text[]) ORDER BY id FOR UPDATE`;

/** The hottest read of the API: one plain statement naming its columns (a kept plan survives an added column). */
const BY_ID: PreparedStatement = {
  name: 'subscriber_by_id',
  text: `SELECT ${COLUMN_LIST} FROM subscribers WHERE tenant_id = $1 AND id = $2`,
};

const BY_ID_FOR_UPDATE: PreparedStatement = {
  name: 'subscriber_by_id_for_update',
  text: `${BY_ID.text} FOR UPDATE`,
};

/** Writes every column but the key and created_at of `subscriber`: its values added to `params`. */
function updateSubscriber(params: SqlParams, subscriber: Subscriber): PreparedStatement {
  const set = UPDATED.map(({ column, property }) => `${column} = ${params.add(subscriber[property])}`).join(
    ', ',
  );
  return {
    name: 'subscriber_update',
    text: `UPDATE subscribers SET ${set} WHERE tenant_id = ${params.add(subscriber.tenantId)} AND id = ${params.add(subscriber.id)}`,
  };
}

/** A `subscribers` row as `pg` returns it, by column name. */
type SubscriberRow = Record<string, unknown>;

function fromRow(row: SubscriberRow): Subscriber {
  const subscriber = new Subscriber();
  for (const { property, column } of COLUMNS) {
    Object.assign(subscriber, { [property]: row[column] });
  }
  return subscriber;
}

/**
 * The list, each item SubscriberDto.from as Postgres renders it, field for field (test/api/list-rendering.e2e-spec.ts
 * holds the two to the same answer).
 */
export const SUBSCRIBER_LIST: RenderedList = {
  name: 'subscribers_page',
  table: 'subscribers',
  alias: 's',
  item: `json_build_object(
    'id', s.id, 'external_id', s.external_id, 'full_name', s.full_name, 'status', s.status,
    'billing_profile_id', s.billing_profile_id, 'created_at', ${isoTimestampSql('s.created_at')},
    'email', s.email, 'phone', s.phone, 'suspension_reason', s.suspension_reason, 'address', s.address,
    'metadata', s.metadata, 'updated_at', ${isoTimestampSql('s.updated_at')},
    'tax_exempt', s.tax_exempt, 'tax_exempt_reason', s.tax_exempt_reason, 'tax_id', s.tax_id)`,
};

/** A JSON number's text (jsonb's) that JavaScript writes back the same: plain, at most 15 significant digits. */
const PLAIN_NUMBER = (text: string) =>
  `(${text} ~ '^-?(0|[1-9][0-9]{0,20})(\\.[0-9]*[1-9])?$' AND length(trim(BOTH '0' FROM translate(${text}, '-.', ''))) <= 15 ` +
  `AND (${text}::numeric = 0 OR abs(${text}::numeric) >= 0.000001))`;

/** A metadata key JavaScript orders first (an array index), as a number; NULL for any other key. */
const INDEX_KEY = `CASE WHEN m.key ~ '^(0|[1-9][0-9]{0,9})$' AND m.key::bigint < 4294967295 THEN m.key::bigint END`;

/**
 * The export's record of a subscriber (exports/columns.ts SUBSCRIBER_COLUMNS, in its order), as csv-write writes
 * the list item: metadata as JSON.stringify writes the parsed item's object (no spaces; array-index keys first, in
 * numeric order, then jsonb's). `exact` is false for a metadata value JavaScript would write otherwise (a number
 * outside PLAIN_NUMBER, a nested value): that page is exported from its JSON items (test/exports).
 */
export const SUBSCRIBER_CSV: RenderedCsv = {
  record: `concat_ws(',', ${[
    's.id',
    's.external_id',
    's.full_name',
    's.status::text',
    's.suspension_reason::text',
    's.email',
    's.phone',
    "s.address->>'line1'",
    "s.address->>'city'",
    "s.address->>'state'",
    "s.address->>'postal_code'",
    's.billing_profile_id',
  ]
    .map(csvTextSql)
    .join(
      ', ',
    )}, coalesce(s.tax_exempt::text, ''), ${csvTextSql('s.tax_exempt_reason')}, ${csvTextSql('s.tax_id')},
    CASE WHEN jsonb_typeof(s.metadata) = 'object' AND s.metadata <> '{}' THEN '"' || replace((
      SELECT '{' || string_agg(to_json(m.key)::text || ':' || m.value::text, ',' ORDER BY (${INDEX_KEY}) IS NULL, ${INDEX_KEY}, m.i) || '}'
      FROM jsonb_each(s.metadata) WITH ORDINALITY m(key, value, i)), '"', '""') || '"' ELSE '' END,
    ${isoTimestampSql('s.created_at')}, ${isoTimestampSql('s.updated_at')}) || chr(13) || chr(10)`,
  exact: `(s.metadata IS NULL OR jsonb_typeof(s.metadata) = 'object' AND NOT EXISTS (
    SELECT 1 FROM jsonb_each(s.metadata) m WHERE jsonb_typeof(m.value) IN ('object', 'array')
      OR CASE WHEN jsonb_typeof(m.value) = 'number' THEN NOT ${PLAIN_NUMBER('m.value::text')} ELSE false END))
    AND (s.address IS NULL OR jsonb_typeof(s.address) = 'object' AND NOT EXISTS (
      SELECT 1 FROM jsonb_each(s.address) f WHERE jsonb_typeof(f.value) NOT IN ('string', 'null')))`,
};

/** The row's values in the order of the entity's columns: the parameters of INSERT_SUBSCRIBER. */
export function subscriberParams(subscriber: Subscriber): unknown[] {
  return COLUMNS.map(({ property }) => subscriber[property]);
}

/** Filters of the list; email is compared normalized (lower case), phone in E.164. */
export interface SubscriberFilter {
  statuses?: SubscriberStatus[];
  externalId?: string;
  emailNormalized?: string | null;
  phone?: string;
}

/** The conditions of a page of the tenant's subscribers with `filter`. */
function pageConditions(tenantId: string, filter: SubscriberFilter): Condition[] {
  const conditions: Condition[] = [{ sql: 's.tenant_id = ?', values: [tenantId], indexed: true }];
  if (filter.statuses) {
    conditions.push(oneOf('s.status', filter.statuses));
  }
  if (filter.externalId) {
    conditions.push({ sql: 's.external_id = ?', values: [filter.externalId] });
  }
  if (filter.emailNormalized) {
    conditions.push({ sql: 's.email_normalized = ?', values: [filter.emailNormalized] });
  }
  if (filter.phone) {
    conditions.push({ sql: 's.phone = ?', values: [filter.phone] });
  }
  return conditions;
}

/**
 * The subscribers table in another module's statement, `subscribers <alias>` after its FROM or JOIN, for the
 * statements that must read subscribers with their own tables in one snapshot: billing's bill run (due subscribers,
 * row-locked), its dunning sweeps and the profile a subscriber bills through. They read its tenant_id, id, status,
 * billing_profile_id and tax_exempt. Other reads call SubscribersService (docs/architecture.md, "Owns (tables)").
 */
export function subscribersTable(alias: string): string {
  return `subscribers ${alias}`;
}

/** The only place the `subscribers` table is read and written (and subscribersTable the way others' statements join it). */
@Injectable()
export class SubscribersRepository {
  constructor(private readonly events: EventsRepository) {}

  /**
   * POST /subscribers: the subscriber, its event and what the event queues (the outbox), one prepared statement, with
   * the request's idempotency claim when it carries one; answers how many deliveries were queued.
   */
  async insertWithEvent(
    manager: EntityManager,
    subscriber: Subscriber,
    event: EventRecord,
    claim: ClaimInStatement | null,
  ): Promise<number> {
    const params = new SqlParams();
    const subscriberCte = `subscriber AS (${insertSubscriber(params, subscriber)})`;
    const claimed = claim?.ctes(params);
    const statement = claimed
      ? this.events.statement('subscriber_create_keyed', params, event, `${subscriberCte}, ${claimed.sql}`, {
          check: claimed.check,
        })
      : this.events.statement('subscriber_create', params, event, subscriberCte);
    const rows = await preparedQuery<{ deliveries: number }>(manager, statement, params.values);
    return rows[0].deliveries;
  }

  /** The tenant's subscriber, or null. */
  async findById(manager: EntityManager, tenantId: string, id: string): Promise<Subscriber | null> {
    const rows = await preparedQuery<SubscriberRow>(manager, BY_ID, [tenantId, id]);
    return rows.length === 0 ? null : fromRow(rows[0]);
  }

  /** The tenant's subscriber row-locked until the transaction ends, or null. */
  async findForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<Subscriber | null> {
    const rows = await preparedQuery<SubscriberRow>(manager, BY_ID_FOR_UPDATE, [tenantId, id]);
    return rows.length === 0 ? null : fromRow(rows[0]);
  }

  /** The tenant's subscriber, row-locked until the transaction ends; 404 not_found when there is none. */
  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<Subscriber> {
    return lockForUpdate(manager, Subscriber, tenantId, id, 'subscriber');
  }

  /**
   * Those of the subscribers `ids` (any tenant's: the caller checks) whose status is one of `statuses`, row-locked in
   * id order until the transaction ends. A row that leaves those statuses while the lock is awaited is left out.
   */
  lockManyInStatus(
    manager: EntityManager,
    ids: readonly string[],
    statuses: readonly SubscriberStatus[],
  ): Promise<Subscriber[]> {
    return manager
      .getRepository(Subscriber)
      .createQueryBuilder('subscriber')
      .setLock('pessimistic_write')
      .where('subscriber.id = ANY(:ids) AND subscriber.status = ANY(:statuses)', {
        ids: [...new Set(ids)],
        statuses,
      })
      .orderBy('subscriber.id')
      .getMany();
  }

  /** An import's new subscribers, one statement (their events are the caller's: EventsService.appendMany). */
  async insertMany(manager: EntityManager, subscribers: readonly Subscriber[]): Promise<void> {
    if (subscribers.length > 0) {
      await manager.query(INSERT_MANY.sql, INSERT_MANY.params(subscribers));
    }
  }

  /** The tenant's subscribers among `externalIds`, row-locked until the transaction ends. */
  /**
   * The tenant's live (not archived) subscriber with this (normalized) email, or null: uq_subscribers_email allows one
   * live subscriber per email, while archived ones may share it and are never found here.
   */
  findByEmail(manager: EntityManager, tenantId: string, emailNormalized: string): Promise<Subscriber | null> {
    return manager.findOneBy(Subscriber, {
      tenantId,
      emailNormalized,
      status: Not(SubscriberStatus.Archived),
    });
  }

  async lockByExternalIds(
    manager: EntityManager,
    tenantId: string,
    externalIds: readonly string[],
  ): Promise<Subscriber[]> {
    if (externalIds.length === 0) {
      return [];
    }
    const rows: SubscriberRow[] = await manager.query(BY_EXTERNAL_IDS, [tenantId, externalIds]);
    return rows.map(fromRow);
  }

  /** Of the normalized `emails`, those a live (not archived) subscriber of the tenant has, with that subscriber. */
  async liveEmailOwners(
    manager: EntityManager,
    tenantId: string,
    emails: readonly string[],
  ): Promise<{ email: string; id: string }[]> {
    if (emails.length === 0) {
      return [];
    }
    return manager.query(
      `SELECT email_normalized AS email, id FROM subscribers
        WHERE tenant_id = $1 AND email_normalized = ANY($2::text[]) AND status <> 'archived'`,
      [tenantId, emails],
    );
  }

  /** Writes every column but the key and created_at: one UPDATE, no read-before-write. */
  async update(manager: EntityManager, subscriber: Subscriber): Promise<void> {
    const params = new SqlParams();
    await preparedQuery(manager, updateSubscriber(params, subscriber), params.values);
  }

  /** A page of the tenant's subscribers, newest first, each rendered by Postgres as SubscriberDto. */
  page(
    manager: EntityManager,
    tenantId: string,
    filter: SubscriberFilter,
    query: PageQueryDto,
  ): Promise<RenderedPage> {
    return renderedPage(manager, SUBSCRIBER_LIST, pageConditions(tenantId, filter), query);
  }

  /** The same page as the export's CSV records (SUBSCRIBER_CSV), rendered by Postgres. */
  csvPage(
    manager: EntityManager,
    tenantId: string,
    filter: SubscriberFilter,
    query: PageQueryDto,
  ): Promise<CsvPage> {
    return renderedCsvPage(manager, SUBSCRIBER_LIST, SUBSCRIBER_CSV, pageConditions(tenantId, filter), query);
  }

  /** Deletes every subscribers row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM subscribers WHERE tenant_id = $1', [tenantId]);
  }
}
