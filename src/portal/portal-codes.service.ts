import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { MintedPortalCode, PortalCodeMinter } from '../common/auth/portal';
import { Clock } from '../common/clock';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids';
import { requestContext, type WriteScope } from '../common/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import { AbuseService, TenantsService } from '../gateway';
import { SubscribersService, type Subscriber } from '../subscribers';
import {
  type IssuedPortalSessionDto,
  PortalSignInCodeDto,
  type RequestSignInCodeDto,
  type SignInCodeRequestedDto,
} from './dto/portal.dto';
import type { PortalSignInCode } from './portal.entity';
import { PortalRepository } from './portal.repository';
import {
  hashSecret,
  hashSignInCode,
  inviteLink,
  newInviteCode,
  newSessionSecret,
  newSignInCode,
  normalizePortalEmail,
  SIGN_IN_CODE_MAX_TRIES,
  signInCodeMatches,
} from './portal-secrets';
import { PortalSessionWriter } from './portal-session-writer';

/**
 * The second way in (docs/portal.md): a six-digit code mailed to the subscriber's email. A request writes the code's
 * row without a code, and its portal.sign_in_code_requested event queues the mail; the notification worker mints the
 * code when it sends (mint, PORTAL_CODE_MINTER), so no event or stored row ever holds it (docs/decisions.md).
 */
@Injectable()
export class PortalCodesService implements PortalCodeMinter {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly portal: PortalRepository,
    private readonly sessions: PortalSessionWriter,
    private readonly subscribers: SubscribersService,
    private readonly tenants: TenantsService,
    private readonly abuse: AbuseService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * POST /portal/sign-in-codes: the same answer whether or not a live subscriber of the tenant has the email (no
   * enumeration); when one has, its older live codes are superseded and a new one is queued for mailing. Counted per
   * IP and per normalised email (existing or not): 429 past either limit.
   */
  async request(dto: RequestSignInCodeDto, ip: string): Promise<SignInCodeRequestedDto> {
    const { codeTtlS, codeMaxPerEmail, codeWindowS } = this.config.portal;
    const email = normalizePortalEmail(dto.email);
    await this.sessions.limitIp(ip);
    await this.sessions.limit(
      `portal:code:email:${email}`,
      codeMaxPerEmail,
      codeWindowS,
      'sign-in codes requested for this email',
    );
    const subscriber = await this.subscriberOf(dto.tenant, email);
    if (subscriber) {
      const system: WriteScope = {
        requestId: requestContext.requestId(),
        actor: { type: 'system', id: null },
      };
      await this.transactionRunner.run(system, async (tx) => {
        const now = this.clock.now();
        await this.portal.supersedeSignInCodes(tx.manager, subscriber.tenantId, subscriber.id, now);
        const row: PortalSignInCode = {
          tenantId: subscriber.tenantId,
          id: newId('psc', now),
          subscriberId: subscriber.id,
          codeHash: null,
          attempts: 0,
          expiresAt: new Date(now.getTime() + codeTtlS * 1000),
          usedAt: null,
          supersededAt: null,
          createdAt: now,
        };
        await this.portal.insertSignInCode(tx.manager, row);
        await this.events.append(tx, {
          tenantId: row.tenantId,
          type: 'portal.sign_in_code_requested',
          subjectId: row.subscriberId,
          object: PortalSignInCodeDto.from(row),
        });
      });
    }
    return { email, expires_in_s: codeTtlS };
  }

  /**
   * Signs in with tenant, email and code: the subscriber's live code is locked, so of two sign-ins racing with one
   * code exactly one gets a session; a wrong code counts a try (the fifth kills it). Every refusal is 401
   * invalid_code and a failed authentication for the abuse block. The caller counted the IP.
   */
  async signIn(tenant: string, email: string, code: string, ip: string): Promise<IssuedPortalSessionDto> {
    const subscriber = await this.subscriberOf(tenant, normalizePortalEmail(email));
    const secret = newSessionSecret();
    const requestId = requestContext.requestId();
    const system: WriteScope = { requestId, actor: { type: 'system', id: null } };
    const session = subscriber
      ? await this.transactionRunner.run(system, async (tx) => {
          const now = this.clock.now();
          const live = await this.portal.lockLiveSignInCode(
            tx.manager,
            subscriber.tenantId,
            subscriber.id,
            now,
            SIGN_IN_CODE_MAX_TRIES,
          );
          if (!live) {
            return null;
          }
          if (!signInCodeMatches(live.id, code, live.codeHash)) {
            await this.portal.countWrongTry(tx.manager, live.id);
            return null;
          }
          await this.portal.useSignInCode(tx.manager, live.id, now);
          return this.sessions.open(tx, live, 'code', secret, requestId);
        })
      : null;
    if (!session) {
      await this.abuse.recordAuthFailure(ip);
      throw new ApiError(
        'invalid_code',
        'The sign-in code is wrong, already used, superseded or expired: request a new one.',
        'code',
      );
    }
    return this.sessions.issued(session, secret);
  }

  /** PortalCodeMinter: a fresh code for the mail being sent now; only its hash is stored, replacing any earlier one. */
  async mint(
    what: 'invite' | 'sign_in_code',
    tenantId: string,
    id: string,
  ): Promise<MintedPortalCode | null> {
    const { manager } = this.dataSource;
    const now = this.clock.now();
    const base = this.config.portal.url;
    if (what === 'invite') {
      const code = newInviteCode();
      const minted = await this.portal.setInviteCode(manager, tenantId, id, hashSecret(code), now);
      return minted ? { code, link: inviteLink(base, code) } : null;
    }
    const code = newSignInCode();
    const minted = await this.portal.setSignInCode(
      manager,
      tenantId,
      id,
      hashSignInCode(id, code),
      now,
      SIGN_IN_CODE_MAX_TRIES,
    );
    return minted ? { code, link: base } : null;
  }

  /** The live subscriber of the tenant `slug` with this normalised email, or null (no tenant, no such subscriber). */
  private async subscriberOf(slug: string, email: string): Promise<Subscriber | null> {
    const tenant = await this.tenants.findByIdOrSlug(slug);
    return tenant ? this.subscribers.findByEmail(tenant.id, email) : null;
  }
}
