import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { addDays, daysBetween, daysFrom, MIN_DAY } from '../common/dates';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { decodeCursor, encodeCursor } from '../common/pagination';
import { SessionDto, UsageDto, type ListSessionsQueryDto, type UsageQueryDto } from './dto/session.dto';
import type { Service } from './provisioning.entity';
import { RadiusRepository, type SessionWindow } from './radius.repository';
import { ServicesService } from './services.service';

/** The longest usage range one request may ask for. */
export const MAX_USAGE_DAYS = 366;

/**
 * A service's sessions and daily usage, read from FreeRADIUS's accounting (radacct) by the service's RADIUS username.
 * Usernames are reused once a service is terminated, so a service's sessions are those of its username that started
 * while it existed: from its creation to its termination.
 */
@Injectable()
export class NetworkSessionsService {
  constructor(
    private readonly services: ServicesService,
    private readonly radius: RadiusRepository,
    private readonly clock: Clock,
  ) {}

  async sessions(
    tenantId: string,
    serviceId: string,
    query: ListSessionsQueryDto,
  ): Promise<Page<SessionDto>> {
    const service = await this.services.get(tenantId, serviceId);
    const beforeId = query.starting_after ? this.cursorId(query.starting_after) : null;
    const rows = await this.radius.sessions(windowOf(service), {
      limit: query.limit,
      beforeId,
      startedGte: query.created_gte ? new Date(query.created_gte) : null,
      startedLt: query.created_lt ? new Date(query.created_lt) : null,
    });
    const hasMore = rows.length > query.limit;
    const items = hasMore ? rows.slice(0, query.limit) : rows;
    const last = items[items.length - 1];
    return new Page(
      items.map((session) => SessionDto.from(service.id, session)),
      {
        limit: query.limit,
        has_more: hasMore,
        next_cursor: hasMore && last ? encodeCursor(last.startedAt ?? new Date(0), last.radacctId) : null,
      },
    );
  }

  async usage(tenantId: string, serviceId: string, query: UsageQueryDto): Promise<UsageDto> {
    const service = await this.services.get(tenantId, serviceId);
    const to = query.to ?? this.clock.today();
    // The default never reaches before the first day the API accepts.
    const monthBefore = addDays(to, -29);
    const from = query.from ?? (monthBefore < MIN_DAY ? MIN_DAY : monthBefore);
    if (from > to) {
      throw new ApiError('invalid_query', 'from must not be after to.', 'from');
    }
    if (daysBetween(from, to) + 1 > MAX_USAGE_DAYS) {
      throw new ApiError('invalid_query', `A usage range is at most ${MAX_USAGE_DAYS} days.`, 'from');
    }
    const used = new Map(
      (await this.radius.dailyUsage(windowOf(service), from, to)).map((day) => [day.day, day]),
    );
    // Counted up front (at most MAX_USAGE_DAYS): a walk comparing day strings never ended past year 9999.
    const days: UsageDto['days'] = daysFrom(from, daysBetween(from, to) + 1).map((day) => {
      const found = used.get(day);
      return { date: day, bytes_in: found?.bytesIn ?? 0, bytes_out: found?.bytesOut ?? 0 };
    });
    return {
      service_id: service.id,
      from,
      to,
      days,
      total: {
        bytes_in: days.reduce((sum, day) => sum + day.bytes_in, 0),
        bytes_out: days.reduce((sum, day) => sum + day.bytes_out, 0),
      },
    };
  }

  /** The radacct row a cursor of this list points at (cursors are opaque to clients). */
  private cursorId(raw: string): string {
    const { id } = decodeCursor(raw);
    if (!/^[0-9]{1,19}$/.test(id)) {
      throw new ApiError(
        'invalid_cursor',
        'starting_after is not a cursor this API issued.',
        'starting_after',
      );
    }
    return id;
  }
}

/**
 * FreeRADIUS records times to the second (and by its own clock): a session that started in the second the service was
 * created must not fall before it, so the window opens at the start of that second.
 */
function windowOf(service: Service): SessionWindow {
  const from = new Date(Math.floor(service.createdAt.getTime() / 1000) * 1000);
  return { username: service.radiusUsername, from, until: service.terminatedAt };
}
