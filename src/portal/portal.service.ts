import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PortalGate, PortalPrincipal } from '../common/auth/portal';
import { PORTAL_SCOPE } from '../common/auth/portal';
import { Clock } from '../common/clock';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids';
import { type AuthContext, requestContext, type WriteScope } from '../common/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import {
  AbuseService,
  COUNTER_STORE,
  type CounterStore,
  DEFAULT_LOCALE,
  TenantSettingsRepository,
} from '../gateway';
import { SubscribersService, SubscriberStatus } from '../subscribers';
import {
  IssuedPortalInviteDto,
  IssuedPortalSessionDto,
  PortalInviteDto,
  PortalSessionDto,
  PortalSessionInfoDto,
  RevokedPortalSessionsDto,
} from './dto/portal.dto';
import type { PortalInvite, PortalSession } from './portal.entity';
import { PortalRepository } from './portal.repository';
import { hashSecret, INVITE_PREFIX, newInviteCode, newSessionSecret } from './portal-secrets';

/** Invites, sign-ins and sessions of the portal (docs/portal.md); the binding itself is PortalBindingInterceptor's. */
@Injectable()
export class PortalService implements PortalGate {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly portal: PortalRepository,
    private readonly subscribers: SubscribersService,
    private readonly tenantSettings: TenantSettingsRepository,
    private readonly abuse: AbuseService,
    @Inject(COUNTER_STORE) private readonly counters: CounterStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** A one-time invite for the subscriber; its code is in this answer only (and never in the event). */
  async invite(auth: AuthContext, subscriberId: string): Promise<IssuedPortalInviteDto> {
    const code = newInviteCode();
    const invite = await this.transactionRunner.run({ ...auth, idempotency: undefined }, async (tx) => {
      const subscriber = await this.subscribers.findIn(tx.manager, auth.tenantId, subscriberId);
      if (!subscriber) {
        throw ApiError.notFound('subscriber', subscriberId);
      }
      if (subscriber.status === SubscriberStatus.Archived) {
        throw new ApiError(
          'invalid_state_transition',
          `Subscriber ${subscriberId} is archived and read-only.`,
        );
      }
      const now = this.clock.now();
      const row: PortalInvite = {
        tenantId: auth.tenantId,
        id: newId('pin', now),
        subscriberId,
        codeHash: hashSecret(code),
        delivery: 'link',
        expiresAt: new Date(now.getTime() + this.config.portal.inviteTtlS * 1000),
        usedAt: null,
        createdAt: now,
      };
      await this.portal.insertInvite(tx.manager, row);
      await this.events.append(tx, {
        tenantId: auth.tenantId,
        type: 'portal.invite_created',
        subjectId: subscriberId,
        object: PortalInviteDto.from(row),
      });
      return row;
    });
    const base = this.config.portal.url;
    const url = base ? `${base}${base.includes('?') ? '&' : '?'}invite=${encodeURIComponent(code)}` : null;
    return { ...PortalInviteDto.from(invite), code, url };
  }

  /**
   * Signs in with an invite code: the code is used once (of two sign-ins racing with it, exactly one wins), and a
   * session token bound to its subscriber is issued. Attempts are counted per IP (PORTAL_SIGN_IN_MAX_PER_IP), and
   * each refused one is a failed authentication for the abuse block.
   */
  async signIn(inviteCode: string, ip: string): Promise<IssuedPortalSessionDto> {
    const { signInMaxPerIp, signInWindowS, sessionTtlS } = this.config.portal;
    const attempts = await this.counters.hit(`portal:sign-in:ip:${ip}`, signInWindowS * 1000);
    if (attempts.count > signInMaxPerIp) {
      const retryS = Math.max(1, Math.ceil(attempts.resetMs / 1000));
      throw new ApiError(
        'rate_limited',
        `Too many portal sign-ins from this address; retry in ${retryS} s.`,
        null,
        { 'Retry-After': String(retryS) },
      );
    }
    const secret = newSessionSecret();
    const requestId = requestContext.requestId();
    const system: WriteScope = { requestId, actor: { type: 'system', id: null } };
    const session = await this.transactionRunner.run(system, async (tx) => {
      const now = this.clock.now();
      const grant = inviteCode.startsWith(INVITE_PREFIX)
        ? await this.portal.claimInvite(tx.manager, hashSecret(inviteCode), now)
        : null;
      const subscriber = grant
        ? await this.subscribers.findIn(tx.manager, grant.tenant_id, grant.subscriber_id)
        : null;
      if (!grant || !subscriber || subscriber.status === SubscriberStatus.Archived) {
        return null;
      }
      const row: PortalSession = {
        tenantId: grant.tenant_id,
        id: newId('pss', now),
        subscriberId: grant.subscriber_id,
        tokenHash: hashSecret(secret),
        method: 'invite',
        expiresAt: new Date(now.getTime() + sessionTtlS * 1000),
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
    });
    if (!session) {
      await this.abuse.recordAuthFailure(ip);
      throw new ApiError(
        'invalid_invite',
        'The invite code is unknown, already used or expired.',
        'invite_code',
      );
    }
    return { ...PortalSessionDto.from(session), token: secret, scope: PORTAL_SCOPE };
  }

  /** The live session whose token this is (PortalGate, for the auth guard), or null. */
  async authenticate(secret: string): Promise<PortalPrincipal | null> {
    const session = await this.portal.findSessionByHash(this.dataSource.manager, hashSecret(secret));
    if (!session || session.revokedAt || session.expiresAt.getTime() <= this.clock.now().getTime()) {
      return null;
    }
    return { sessionId: session.id, tenantId: session.tenantId, subscriberId: session.subscriberId };
  }

  /** GET /portal/session: the session, its subscriber, and what the portal shows of the tenant. */
  async info(auth: AuthContext): Promise<PortalSessionInfoDto> {
    const manager = this.dataSource.manager;
    const session = await this.portal.findSession(manager, auth.tenantId, auth.tokenId);
    const issuer = await this.tenantSettings.issuer(manager, auth.tenantId);
    if (!session || !issuer) {
      throw new ApiError('invalid_token', 'The bearer token is unknown, revoked or expired.');
    }
    return {
      ...PortalSessionDto.from(session),
      tenant: {
        id: auth.tenantId,
        name: issuer.legal_name ?? issuer.tenant_name,
        locale: issuer.locale ?? DEFAULT_LOCALE,
        payment_instructions: issuer.payment_instructions,
      },
    };
  }

  /** DELETE /portal/session: the subscriber signs out; the token stops working at once. */
  async signOut(auth: AuthContext): Promise<PortalSessionDto> {
    const subscriberId = this.boundSubscriber(auth);
    return this.transactionRunner.run({ ...auth, idempotency: undefined }, async (tx) => {
      const [revoked] = await this.portal.revokeSessions(
        tx.manager,
        auth.tenantId,
        subscriberId,
        this.clock.now(),
        auth.tokenId,
      );
      if (!revoked) {
        throw new ApiError('invalid_token', 'The bearer token is unknown, revoked or expired.');
      }
      const object = PortalSessionDto.from({ ...revoked, subscriberId });
      await this.events.append(tx, {
        tenantId: auth.tenantId,
        type: 'portal.session_revoked',
        subjectId: subscriberId,
        object,
      });
      return object;
    });
  }

  /** An operator ends every live portal session of the subscriber; each is a portal.session_revoked event. */
  async revokeAll(auth: AuthContext, subscriberId: string): Promise<RevokedPortalSessionsDto> {
    return this.transactionRunner.run(auth, async (tx) => {
      if (!(await this.subscribers.findIn(tx.manager, auth.tenantId, subscriberId))) {
        throw ApiError.notFound('subscriber', subscriberId);
      }
      const revoked = await this.portal.revokeSessions(
        tx.manager,
        auth.tenantId,
        subscriberId,
        this.clock.now(),
        null,
      );
      for (const session of revoked) {
        await this.events.append(tx, {
          tenantId: auth.tenantId,
          type: 'portal.session_revoked',
          subjectId: subscriberId,
          object: PortalSessionDto.from({ ...session, subscriberId }),
        });
      }
      return { subscriber_id: subscriberId, revoked: revoked.length };
    });
  }

  private boundSubscriber(auth: AuthContext): string {
    if (!auth.portal) {
      throw new ApiError('insufficient_scope', `This endpoint requires the scope ${PORTAL_SCOPE}.`);
    }
    return auth.portal.subscriberId;
  }
}
