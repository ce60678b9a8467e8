import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { PortalGate, PortalPrincipal } from '../common/auth/portal';
import { PORTAL_SCOPE } from '../common/auth/portal';
import { Clock } from '../common/clock';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids';
import { type AuthContext, requestContext, type WriteScope } from '../common/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import { AbuseService, DEFAULT_LOCALE, TenantSettingsRepository } from '../gateway';
import { ServicePlansService } from '../provisioning';
import { SubscribersService, SubscriberStatus } from '../subscribers';
import {
  type InviteDelivery,
  IssuedPortalInviteDto,
  IssuedPortalSessionDto,
  PortalInviteDto,
  PortalSessionDto,
  PortalSessionInfoDto,
  RevokedPortalSessionsDto,
} from './dto/portal.dto';
import type { PortalInvite } from './portal.entity';
import { PortalRepository } from './portal.repository';
import { PortalCodesService } from './portal-codes.service';
import { hashSecret, INVITE_PREFIX, inviteLink, newInviteCode, newSessionSecret } from './portal-secrets';
import { PortalSessionWriter } from './portal-session-writer';
import { type SignInFields, signInWay } from './portal-sign-in';

/** Invites, sign-ins and sessions of the portal (docs/portal.md); the binding itself is PortalBindingInterceptor's. */
@Injectable()
export class PortalService implements PortalGate {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly portal: PortalRepository,
    private readonly subscribers: SubscribersService,
    private readonly plans: ServicePlansService,
    private readonly tenantSettings: TenantSettingsRepository,
    private readonly abuse: AbuseService,
    private readonly sessions: PortalSessionWriter,
    private readonly codes: PortalCodesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * A one-time invite for the subscriber. delivery link: its code is in this answer only. delivery email: the answer
   * holds no code; the portal.invite_created event queues the mail, whose code the notification worker mints when it
   * sends (PortalCodesService.mint). The event never holds a code.
   */
  async invite(
    auth: AuthContext,
    subscriberId: string,
    delivery: InviteDelivery = 'link',
  ): Promise<IssuedPortalInviteDto> {
    const code = delivery === 'link' ? newInviteCode() : null;
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
      if (delivery === 'email') {
        await this.assertMailable(tx.manager, auth.tenantId, subscriber.email);
      }
      const now = this.clock.now();
      const row: PortalInvite = {
        tenantId: auth.tenantId,
        id: newId('pin', now),
        subscriberId,
        codeHash: code === null ? null : hashSecret(code),
        delivery,
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
    if (code === null) {
      return PortalInviteDto.from(invite);
    }
    return { ...PortalInviteDto.from(invite), code, url: inviteLink(this.config.portal.url, code) };
  }

  /** 422 on `delivery` when an emailed invite cannot be sent: no email, or the tenant switched portal_invite off. */
  private async assertMailable(
    manager: EntityManager,
    tenantId: string,
    email: string | null,
  ): Promise<void> {
    if (!email) {
      throw new ApiError(
        'validation_failed',
        'delivery email needs a subscriber with an email: set one, or use delivery link.',
        'delivery',
      );
    }
    const mailing = await this.tenantSettings.mailing(manager, tenantId);
    if (mailing && !mailing.sends.portal_invite) {
      throw new ApiError(
        'validation_failed',
        'delivery email is off: the tenant switched portal_invite notifications off (tenant settings).',
        'delivery',
      );
    }
  }

  /**
   * POST /portal/sessions, either way in (signInWay): an invite code, or tenant + email + an emailed code
   * (PortalCodesService). Attempts are counted per IP (PORTAL_SIGN_IN_MAX_PER_IP) first.
   */
  async signIn(fields: SignInFields, ip: string): Promise<IssuedPortalSessionDto> {
    const way = signInWay(fields);
    await this.sessions.limitIp(ip);
    return way.way === 'invite'
      ? this.signInWithInvite(way.inviteCode, ip)
      : this.codes.signIn(way.tenant, way.email, way.code, ip);
  }

  /**
   * Signs in with an invite code: the code is used once (of two sign-ins racing with it, exactly one wins), and a
   * session token bound to its subscriber is issued; a refused one is a failed authentication for the abuse block.
   */
  private async signInWithInvite(inviteCode: string, ip: string): Promise<IssuedPortalSessionDto> {
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
      return this.sessions.open(
        tx,
        { tenantId: grant.tenant_id, subscriberId: grant.subscriber_id },
        'invite',
        secret,
        requestId,
      );
    });
    if (!session) {
      await this.abuse.recordAuthFailure(ip);
      throw new ApiError(
        'invalid_invite',
        'The invite code is unknown, already used or expired.',
        'invite_code',
      );
    }
    return this.sessions.issued(session, secret);
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
      plans: (await this.plans.plansOfSubscriber(auth.tenantId, session.subscriberId)).map((plan) => ({
        id: plan.id,
        name: plan.name,
        download_kbps: plan.downloadKbps,
        upload_kbps: plan.uploadKbps,
      })),
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
