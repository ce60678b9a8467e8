import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { Page } from './envelope/envelope';
import { ApiError } from './errors/api-error';
import { ApiInteger } from './swagger/api-types';
import { IsTimestamp } from './validation/is-date-only';
import { Optional } from './validation/optional';

/** Query parameters every list accepts. List DTOs extend this class. */
export class PageQueryDto {
  @ApiInteger({ required: false, minimum: 1, maximum: 100, default: 20, description: 'Page size.' })
  @Optional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit: number = 20;

  @ApiPropertyOptional({ description: 'The `next_cursor` of the previous page.' })
  @Optional()
  @IsString()
  @MaxLength(512)
  starting_after?: string;

  @ApiPropertyOptional({ description: 'Only records created at or after this instant (ISO 8601).' })
  @Optional()
  @IsTimestamp()
  created_gte?: string;

  @ApiPropertyOptional({ description: 'Only records created before this instant (ISO 8601).' })
  @Optional()
  @IsTimestamp()
  created_lt?: string;
}

interface Cursor {
  createdAt: Date;
  id: string;
}

/** The ids a cursor may carry: what newId() makes, and radacct's numbers. */
const CURSOR_ID = /^[A-Za-z0-9_]{1,64}$/;

export function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify([createdAt.toISOString(), id])).toString('base64url');
}

export function decodeCursor(raw: string): Cursor {
  const invalid = new ApiError(
    'invalid_cursor',
    'starting_after is not a cursor this API issued.',
    'starting_after',
  );
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== 'string' ||
    typeof parsed[1] !== 'string'
  ) {
    throw invalid;
  }
  const createdAt = new Date(parsed[0]);
  // Every cursor this API issues holds a record's time and id (`sub_01J…`, or a number): a year outside 1..9999, or
  // an id of other characters (a NUL Postgres cannot even compare), was crafted.
  const year = createdAt.getUTCFullYear();
  if (Number.isNaN(createdAt.getTime()) || year < 1 || year > 9999 || !CURSOR_ID.test(parsed[1])) {
    throw invalid;
  }
  return { createdAt, id: parsed[1] };
}

/**
 * The one keyset paginator: newest first by (created_at, id) (or oldest first, for conversations), `limit + 1` rows to learn has_more, no OFFSET,
 * so a page deep in the table costs what the first one costs (an index on (tenant_id, created_at, id) serves it).
 */
export async function paginate<T extends ObjectLiteral & { createdAt: Date; id: string }>(
  qb: SelectQueryBuilder<T>,
  query: PageQueryDto,
  order: 'newest' | 'oldest' = 'newest',
): Promise<Page<T>> {
  const alias = qb.alias;
  const direction = order === 'newest' ? 'DESC' : 'ASC';
  if (query.created_gte) {
    qb.andWhere(`${alias}.createdAt >= :createdGte`, { createdGte: new Date(query.created_gte) });
  }
  if (query.created_lt) {
    qb.andWhere(`${alias}.createdAt < :createdLt`, { createdLt: new Date(query.created_lt) });
  }
  if (query.starting_after) {
    const cursor = decodeCursor(query.starting_after);
    qb.andWhere(
      `(${alias}.createdAt, ${alias}.id) ${order === 'newest' ? '<' : '>'} (:cursorCreatedAt, :cursorId)`,
      {
        cursorCreatedAt: cursor.createdAt,
        cursorId: cursor.id,
      },
    );
  }
  qb.orderBy(`${alias}.createdAt`, direction)
    .addOrderBy(`${alias}.id`, direction)
    .take(undefined)
    .limit(query.limit + 1);
  const rows = await qb.getMany();
  const hasMore = rows.length > query.limit;
  const items = hasMore ? rows.slice(0, query.limit) : rows;
  const last = items[items.length - 1];
  return new Page(items, {
    limit: query.limit,
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor(last.createdAt, last.id) : null,
  });
}

/** Where a ranked search page ends: the last item's rank and id (docs/decisions.md, "Search"). */
export interface RankCursor {
  rank: number;
  id: string;
}

/** A search's cursor: `[rank, id]`, a number first, so it is never taken for a list's `[created_at, id]`. */
export function encodeRankCursor(rank: number, id: string): string {
  return Buffer.from(JSON.stringify([rank, id])).toString('base64url');
}

export function decodeRankCursor(raw: string): RankCursor {
  const invalid = new ApiError(
    'invalid_cursor',
    'starting_after is not a cursor this API issued for a search (q): a search pages with its own cursors.',
    'starting_after',
  );
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !Number.isSafeInteger(parsed[0]) ||
    (parsed[0] as number) < 0 ||
    (parsed[0] as number) > 2_000_000_000 ||
    typeof parsed[1] !== 'string' ||
    !CURSOR_ID.test(parsed[1])
  ) {
    throw invalid;
  }
  return { rank: parsed[0] as number, id: parsed[1] };
}
