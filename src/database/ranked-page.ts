import { EntityManager } from 'typeorm';
import { RenderedPage } from '../common/envelope/envelope';
import { decodeRankCursor, encodeRankCursor, type PageQueryDto } from '../common/pagination';
import { preparedQuery } from './prepared-query';
import type { RenderedList } from './rendered-page';
import type { SqlParams } from './sql-params';

/** A search of a rendered list: the SQL of the rows that match, ranked, and where its values are. */
export interface RankedSearch {
  /** A SELECT answering `id` and `rank` (an integer, higher first) of each matching row, once per row. */
  ranked: string;
  /** The statement's parameters, holding the values `ranked` names; the page adds its own after them. */
  params: SqlParams;
  tenantId: string;
}

/**
 * A page of a search, best first: by rank, then newest (id) first, keyset on (rank, id) so a next page neither repeats
 * nor skips a row while the data stands still. Only the page's rows are rendered (as renderedPage's items are): the
 * ranking reads the matches' ids and ranks, the items are built for the `limit + 1` kept. One statement, planned for
 * its values (a search's plan depends on its text).
 */
export async function rankedPage(
  manager: EntityManager,
  list: RenderedList,
  search: RankedSearch,
  query: PageQueryDto,
): Promise<RenderedPage> {
  const { params } = search;
  const a = list.alias;
  const limit = params.add(query.limit, 'int');
  let after = '';
  if (query.starting_after) {
    const cursor = decodeRankCursor(query.starting_after);
    after = `WHERE (r.rank, r.id) < (${params.add(cursor.rank, 'int')}, ${params.add(cursor.id, 'text')})`;
  }
  const text =
    `SELECT coalesce(json_agg(${list.item} ORDER BY p.n) FILTER (WHERE p.n <= ${limit}), '[]')::text AS items, ` +
    `count(*) > ${limit} AS has_more, ` +
    `max(p.rank) FILTER (WHERE p.n = ${limit}) AS cursor_rank, max(p.id) FILTER (WHERE p.n = ${limit}) AS cursor_id ` +
    `FROM (SELECT r.id, r.rank, row_number() OVER (ORDER BY r.rank DESC, r.id DESC) AS n ` +
    `FROM (${search.ranked}) r ${after} ORDER BY r.rank DESC, r.id DESC LIMIT ${limit} + 1) p ` +
    `JOIN ${list.table} ${a} ON ${a}.tenant_id = ${params.add(search.tenantId)} AND ${a}.id = p.id`;
  const [row] = await preparedQuery<{
    items: string;
    has_more: boolean;
    cursor_rank: number | null;
    cursor_id: string | null;
  }>(manager, { name: null, text }, params.values);
  return new RenderedPage(row.items, {
    limit: query.limit,
    has_more: row.has_more,
    next_cursor:
      row.has_more && row.cursor_rank !== null && row.cursor_id
        ? encodeRankCursor(row.cursor_rank, row.cursor_id)
        : null,
  });
}
