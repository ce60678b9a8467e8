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

/**
 * A cursor's two parts as this API encodes them (`[first, id]` in base64url JSON), `first` checked by `isFirst`; any
 * other text is 400 invalid_cursor with `message`.
 */
function decodePair<First>(
  raw: string,
  message: string,
  isFirst: (value: unknown) => value is First,
): [First, string] {
  const invalid = new ApiError('invalid_cursor', message, 'starting_after');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !isFirst(parsed[0]) || typeof parsed[1] !== 'string') {
    throw invalid;
  }
  // Every cursor this API issues holds an id `sub_01J…` (or radacct's number): other characters (a NUL Postgres
  // cannot even compare) were crafted.
  if (!CURSOR_ID.test(parsed[1])) {
    throw invalid;
  }
  return [parsed[0], parsed[1]];
}

export function decodeCursor(raw: string): Cursor {
  const message = 'starting_after is not a cursor this API issued.';
  const [time, id] = decodePair(raw, message, (value): value is string => typeof value === 'string');
  const createdAt = new Date(time);
  // Every cursor this API issues holds a record's time: a year outside 1..9999 was crafted.
  const year = createdAt.getUTCFullYear();
  if (Number.isNaN(createdAt.getTime()) || year < 1 || year > 9999) {
    throw new ApiError('invalid_cursor', message, 'starting_after');
  }
  return { createdAt, id };
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
  const [rank, id] = decodePair(
    raw,
    'starting_after is not a cursor this API issued for a search (q): a search pages with its own cursors.',
    (value): value is number =>
      Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= 2_000_000_000,
  );
  return { rank, id };
}
