import { Inject, Injectable } from '@nestjs/common';
import { PORTAL_SCOPE } from '../common/auth/portal';
import { Clock } from '../common/clock';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids';
import type { Tx } from '../database/transaction-runner';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { EventsService } from '../events';
import { COUNTER_STORE, type CounterStore } from '../gateway';
import { type IssuedPortalSessionDto, PortalSessionDto } from './dto/portal.dto';
import type { PortalSession } from './portal.entity';
import { PortalRepository } from './portal.repository';
import { hashSecret } from './portal-secrets';

/** 429 rate_limited with Retry-After, for a counter past its limit. */
export function rateLimited(what: string, resetMs: number): ApiError {
  const retryS = Math.max(1, Math.ceil(resetMs / 1000));
  return new ApiError('rate_limited', `Too many ${what}; retry in ${retryS} s.`, null, {
    'Retry-After': String(retryS),
  });
}

/** What the two ways in share: the per-IP limit, and the session a granted sign-in opens (with its event). */
@Injectable()
export class PortalSessionWriter {
  constructor(
    private readonly portal: PortalRepository,
    private readonly events: EventsService,
    @Inject(COUNTER_STORE) private readonly counters: CounterStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** Counts one public portal request from `ip` (sign-ins and code requests alike); 429 past the limit. */
  async limitIp(ip: string): Promise<void> {
    const { signInMaxPerIp, signInWindowS } = this.config.portal;
    const attempts = await this.counters.hit(`portal:sign-in:ip:${ip}`, signInWindowS * 1000);
    if (attempts.count > signInMaxPerIp) {
      throw rateLimited('portal sign-ins from this address', attempts.resetMs);
    }
  }

  /** Counts `key` in the shared counter store (Redis with REDIS_URL); 429 past `max` in `windowS`. */
  async limit(key: string, max: number, windowS: number, what: string): Promise<void> {
    const hits = await this.counters.hit(key, windowS * 1000);
    if (hits.count > max) {
      throw rateLimited(what, hits.resetMs);
    }
  }

  /** A session for the subscriber, in `tx`, and its portal.signed_in event with the subscriber as actor. */
  async open(
    tx: Tx,
    grant: { tenantId: string; subscriberId: string },
    method: 'invite' | 'code',
    secret: string,
    requestId: string | null,
  ): Promise<PortalSession> {
    const now = this.clock.now();
    const row: PortalSession = {
      tenantId: grant.tenantId,
      id: newId('pss', now),
      subscriberId: grant.subscriberId,
      tokenHash: hashSecret(secret),
      method,
      expiresAt: new Date(now.getTime() + this.config.portal.sessionTtlS * 1000),
      revokedAt: null,
      createdAt: now,
    };
    await this.portal.insertSession(tx.manager, row);
    const asSubscriber = tx.withScope({ requestId, actor: { type: 'subscriber', id: row.subscriberId } });
    await this.events.append(asSubscriber, {
      tenantId: row.tenantId,
      type: 'portal.signed_in',
      subjectId: row.subscriberId,
      object: PortalSessionDto.from(row),
    });
    return row;
  }

  /** The answer of a sign-in: the session and, this once, its token. */
  issued(session: PortalSession, secret: string): IssuedPortalSessionDto {
    return { ...PortalSessionDto.from(session), token: secret, scope: PORTAL_SCOPE };
  }
}
