import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { RenderedPage } from '../common/envelope/envelope';
import { type PageQueryDto } from '../common/pagination';
import { rankedPage } from '../database/ranked-page';
import { SqlParams } from '../database/sql-params';
import { SUBSCRIBER_LIST, type SubscriberFilter } from './subscribers.repository';

/**
 * The text `q=` is found in, one line per field (a match never spans two), lower-cased: name, email, phone,
 * external id, then the address's parts. ix_subscribers_search_trgm (migration 1796600000000) indexes exactly this
 * expression, columns unqualified: a change here is a new migration, or the planner stops using the index.
 */
export function searchTextSql(alias: string): string {
  const a = alias ? `${alias}.` : '';
  const parts = [
    `${a}full_name`,
    `coalesce(${a}email, '')`,
    `coalesce(${a}phone, '')`,
    `coalesce(${a}external_id, '')`,
    ...['line1', 'city', 'state', 'postal_code'].map((part) => `coalesce(${a}address ->> '${part}', '')`),
  ];
  return `lower(${parts.join(` || E'\\n' || `)})`;
}

/** What a search looks for: each value's placeholder, already added to the statement's parameters. */
export interface SearchPlaceholders {
  tenant: string;
  /**
   * `%text%`, LIKE-escaped, lower-cased in SQL: a substring of a field. Added to the parameters when first asked for:
   * a statement must name each of its parameters, and the rare-word path (rareWords) has no use for it.
   */
  pattern(): string;
  /** The lower-cased text itself: an exact match of a key. */
  exact: string;
}

/**
 * Another module's rows that find a subscriber, in the search's statement: SQL answering `id` (the subscriber's) and
 * `exact` (a key equal to the text) for the tenant's rows that match. Provisioning hands in the PPPoE usernames of
 * its services at start-up (ProvisioningModule), so subscribers never names its table. Null when none of the source's
 * rows can hold `text` (the statement then leaves the source out).
 */
export type SubscriberSearchSource = (placeholders: SearchPlaceholders, text: string) => string | null;

/** What `q` was read as: the text, and the forms a phone number takes. */
export interface SubscriberSearch {
  text: string;
  /** The text as a full E.164 number: an exact match of the stored phone. */
  e164: string | null;
  /** The digits of a phone-like text: a substring of the stored phone. */
  phoneDigits: string | null;
  /**
   * The words the trigram index looks up instead of the whole text (rareWords, search-text-sample.ts), in the text's
   * order; the rows found are then checked for the whole text. Null (or absent): the whole text, as LIKE.
   */
  rareWords?: string[] | null;
}

/** The name of the index whose expression's statistics sample the search text (migration 1796600000000). */
export const SEARCH_INDEX = 'ix_subscribers_search_trgm';

/** pg_stats of the search text's index expression: most common values, their frequencies, the histogram's bounds. */
export interface SearchTextStatisticsRow {
  mcv: string[] | null;
  freqs: number[] | null;
  bounds: string[] | null;
}

/** `%`, `_` and the escape character itself, taken literally by LIKE. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (char) => `\\${char}`);

/** The subscribers' search (GET /subscribers?q=): which rows match and in what order (docs/decisions.md, "Search"). */
@Injectable()
export class SubscriberSearchRepository {
  private readonly sources: SubscriberSearchSource[] = [];

  /** Registers another module's rows that find subscribers (provisioning's PPPoE usernames). */
  useSource(source: SubscriberSearchSource): void {
    this.sources.push(source);
  }

  /** The statistics PostgreSQL keeps for the planner on the search text (none before the table is analyzed). */
  textStatistics(manager: EntityManager): Promise<SearchTextStatisticsRow[]> {
    return manager.query(
      `SELECT most_common_vals::text::text[] AS mcv, most_common_freqs::float8[] AS freqs, ` +
        `histogram_bounds::text::text[] AS bounds FROM pg_stats ` +
        `WHERE schemaname = current_schema() AND tablename = $1`,
      [SEARCH_INDEX],
    );
  }

  /**
   * A ranked page of the tenant's subscribers matching `search` and `filter`. Rank: 10000 when a key equals the text
   * (external id, email, E.164 phone, a live service's PPPoE username), plus 1000 × word_similarity(text, search
   * text), plus 100 × similarity(text, name): best first, then newest.
   */
  page(
    manager: EntityManager,
    tenantId: string,
    search: SubscriberSearch,
    filter: SubscriberFilter,
    query: PageQueryDto,
  ): Promise<RenderedPage> {
    const params = new SqlParams();
    const tenant = params.add(tenantId, 'text');
    const raw = params.add(search.text, 'text');
    const exact = `lower(${raw})`;
    let patternPlaceholder: string | undefined;
    const pattern = () =>
      (patternPlaceholder ??= `'%' || lower(${params.add(likeLiteral(search.text), 'text')}) || '%'`);
    const text = searchTextSql('s');
    // With `indexed`, the index takes only the rare words; the whole text is checked with strpos (the same test as
    // the LIKE of a pattern without wildcards), which no index takes, so the planner keeps it out of the index scan
    // and checks it on the rows found, instead of reading the posting lists of every common word's trigrams.
    const matches = [
      search.rareWords?.length
        ? `(${text} LIKE '%' || lower(${params.add(search.rareWords.map(likeLiteral).join('%'), 'text')}) || '%' ` +
          `AND strpos(${text}, ${exact}) > 0)`
        : `${text} LIKE ${pattern()}`,
    ];
    const keys = [`s.external_id = ${raw}`, `s.email_normalized = ${exact}`];
    if (search.phoneDigits !== null && search.phoneDigits !== search.text.toLowerCase()) {
      matches.push(`${text} LIKE ${params.add(`%${search.phoneDigits}%`, 'text')}`);
    }
    if (search.e164 !== null) {
      const phone = params.add(search.e164, 'text');
      matches.push(`s.phone = ${phone}`);
      keys.push(`s.phone = ${phone}`);
    }
    const found = [
      `SELECT s.id, (${keys.join(' OR ')}) IS TRUE AS exact FROM subscribers s ` +
        `WHERE s.tenant_id = ${tenant} AND (${matches.join(' OR ')})`,
      ...this.sources.map((source) => source({ tenant, pattern, exact }, search.text)),
    ]
      .filter((sql) => sql !== null)
      .join(' UNION ALL ');
    const where = [`s.tenant_id = ${tenant}`, ...filterConditions(params, filter, query)].join(' AND ');
    const ranked =
      `SELECT s.id, (CASE WHEN bool_or(m.exact) THEN 10000 ELSE 0 END ` +
      `+ round(1000 * word_similarity(${exact}, ${text})) + round(100 * similarity(${exact}, lower(s.full_name))))::int AS rank ` +
      `FROM (${found}) m JOIN subscribers s ON s.id = m.id WHERE ${where} GROUP BY s.id`;
    return rankedPage(manager, SUBSCRIBER_LIST, { ranked, params, tenantId }, query);
  }
}

/** The list's other filters, over `s`, as a search applies them. */
function filterConditions(params: SqlParams, filter: SubscriberFilter, query: PageQueryDto): string[] {
  const conditions: string[] = [];
  if (filter.statuses) {
    conditions.push(`s.status = ANY(${params.add(filter.statuses, 'text[]')})`);
  }
  if (filter.externalId) {
    conditions.push(`s.external_id = ${params.add(filter.externalId, 'text')}`);
  }
  if (filter.emailNormalized) {
    conditions.push(`s.email_normalized = ${params.add(filter.emailNormalized, 'text')}`);
  }
  if (filter.phone) {
    conditions.push(`s.phone = ${params.add(filter.phone, 'text')}`);
  }
  if (query.created_gte) {
    conditions.push(`s.created_at >= ${params.add(new Date(query.created_gte), 'timestamptz')}`);
  }
  if (query.created_lt) {
    conditions.push(`s.created_at < ${params.add(new Date(query.created_lt), 'timestamptz')}`);
  }
  return conditions;
}
