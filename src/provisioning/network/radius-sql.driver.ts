import { Logger } from '@nestjs/common';
import { Batcher } from '../../common/batcher';
import { OrderAction } from '../service-status';
import {
  SessionOutcome,
  type NasDevice,
  type ProvisioningOrder,
  type Service,
  type ServicePlan,
} from '../provisioning.entity';
import {
  RadiusRepository,
  suspendedGroupOf,
  type RadiusSession,
  type RadiusUser,
} from '../radius.repository';
import { CapState, ServiceStatus } from '../service-status';
import { sendDynamicRequest, type DynamicAttribute, type DynamicRequestCode } from './dynamic-authorization';
import { addressReply } from '../ipam/radius-addressing';
import {
  DriverError,
  type DriverOutcome,
  type NetworkDriver,
  NO_POOLS,
  type ServicePools,
  type SuspensionChangeOutcome,
} from './network-driver';
import { DEFAULT_SUSPENSION_PROFILE, type SuspensionProfile, suspendedGroupRows } from './suspension-profile';

/**
 * The rate a service gets in the MikroTik and WISPr attributes (WISPr in bit/s), as radreply and a CoA-Request carry
 * it: the plan's (with its burst, MikroTik's `rx/tx burst-rx/burst-tx threshold-rx/threshold-tx time-rx/time-tx`, rx
 * being the router's receive, the client's upload), or the plan's throttle rates while its data cap throttles the
 * service (no burst). WISPr has no burst attributes.
 */
export function serviceRate(service: Pick<Service, 'capState'>, plan: ServicePlan) {
  // A plan changed to one without throttle rates gives its full rate until the cap worker restores the service.
  const throttled =
    service.capState === CapState.Throttled &&
    Boolean(plan.throttleDownloadKbps) &&
    Boolean(plan.throttleUploadKbps);
  const down = throttled ? plan.throttleDownloadKbps! : plan.downloadKbps;
  const up = throttled ? plan.throttleUploadKbps! : plan.uploadKbps;
  const burst =
    !throttled && plan.burstDownloadKbps
      ? ` ${plan.burstUploadKbps}k/${plan.burstDownloadKbps}k` +
        ` ${plan.burstThresholdUploadKbps}k/${plan.burstThresholdDownloadKbps}k` +
        ` ${plan.burstTimeS}/${plan.burstTimeS}`
      : '';
  return {
    'Mikrotik-Rate-Limit': `${up}k/${down}k${burst}`,
    'WISPr-Bandwidth-Max-Down': down * 1000,
    'WISPr-Bandwidth-Max-Up': up * 1000,
  };
}

/** The rate as FreeRADIUS answers it (radreply rows). */
function rateAttributes(service: Service, plan: ServicePlan): { attribute: string; value: string }[] {
  return Object.entries(serviceRate(service, plan)).map(([attribute, value]) => ({
    attribute,
    value: String(value),
  }));
}

/** What a blocked service's login gets: rejected with a message the NAS may log. */
export const CAP_BLOCKED_MESSAGE = 'Data cap reached';

/**
 * What FreeRADIUS's SQL module should read for a service (docs/network.md): an active service logs in with its
 * password and gets its plan's rate (MikroTik and WISPr attributes) and its addresses (a static address, a delegated
 * prefix, or the dynamic pools the NAS picks them from); a suspended one is put in its tenant's suspended group
 * (`suspended:<slug>`), whose rows reject it or accept it into the walled garden by the tenant's suspension mode; a
 * pending or terminated one has no rows at all.
 */
export function radiusUser(
  service: Service,
  plan: ServicePlan,
  pools: ServicePools = NO_POOLS,
): RadiusUser | null {
  const password = { attribute: 'Cleartext-Password', op: ':=', value: service.pppoePassword };
  switch (service.status) {
    case ServiceStatus.Active:
      if (service.capState === CapState.Blocked) {
        // Its data cap blocks it until the period ends or a top-up: rejected, as a suspended login is.
        return {
          check: [password, { attribute: 'Auth-Type', op: ':=', value: 'Reject' }],
          reply: [{ attribute: 'Reply-Message', op: ':=', value: CAP_BLOCKED_MESSAGE }],
          groups: [],
        };
      }
      return {
        check: [password],
        reply: [
          ...rateAttributes(service, plan).map((rate) => ({ ...rate, op: ':=' })),
          ...addressReply(service, pools),
        ],
        groups: [],
      };
    case ServiceStatus.Suspended:
      return { check: [password], reply: [], groups: [suspendedGroupOf(service.radiusUsername)] };
    case ServiceStatus.Pending:
    case ServiceStatus.Terminated:
      return null;
  }
}

/** The rate of a CoA-Request: the same attributes, each inside its vendor's Vendor-Specific. */
function coaRate(service: Service, plan: ServicePlan): DynamicAttribute[] {
  const rate = serviceRate(service, plan);
  return [
    ['Vendor-Specific', 'Mikrotik', [['Mikrotik-Rate-Limit', rate['Mikrotik-Rate-Limit']]]],
    [
      'Vendor-Specific',
      'WISPr',
      [
        ['WISPr-Bandwidth-Max-Down', rate['WISPr-Bandwidth-Max-Down']],
        ['WISPr-Bandwidth-Max-Up', rate['WISPr-Bandwidth-Max-Up']],
      ],
    ],
  ];
}

/** How the driver reaches the NASes of open sessions (RFC 5176). */
export interface DynamicAuthorization {
  /** The service's tenant's registered NAS at the address a session runs on. */
  nasAt(tenantId: string, ip: string): Promise<NasDevice | null>;
  /** The tenant's suspension mode and walled garden (its network settings); the default rejects. */
  suspension?(tenantId: string): Promise<SuspensionProfile>;
  timeoutMs: number;
  retries: number;
}

/** Worst first: the order records the worst outcome over the service's sessions. */
const SEVERITY = [
  SessionOutcome.Timeout,
  SessionOutcome.UnknownNas,
  SessionOutcome.Nak,
  SessionOutcome.Acked,
  SessionOutcome.NoSession,
];

const REACHES_SESSIONS = [
  OrderAction.Suspend,
  OrderAction.Terminate,
  OrderAction.ChangePlan,
  OrderAction.CapThrottle,
  OrderAction.CapBlock,
  OrderAction.CapRestore,
];

/**
 * NETWORK_DRIVER=radius-sql, the default: writes FreeRADIUS's standard SQL tables, one username per transaction, so
 * the next login gets the service's new answer; then, for a subscriber already online, asks the NAS of each open
 * session (radacct) to end it (suspend, terminate: Disconnect-Request) or to take the new rate (change_plan:
 * CoA-Request), signed with the NAS's secret from the registry.
 */
export class RadiusSqlDriver implements NetworkDriver {
  readonly name = 'radius-sql';
  private readonly logger = new Logger('RadiusSqlDriver');
  /** Written once per process, by the first order; the orders beside it wait for that write rather than repeat it. */
  private groupsReady: Promise<void> | null = null;
  /** The tenants' suspended groups this process made sure exist (by group name), as groupsReady. */
  private readonly tenantGroups = new Map<string, Promise<void>>();
  /** Those whose write has finished. */
  private readonly groupsMade = new Set<string>();
  /**
   * The orders the worker carries out side by side write their usernames in one transaction; when it fails, each is
   * written again on its own, so one bad row fails its order alone.
   */
  private readonly writes = new Batcher<{ username: string; user: RadiusUser | null }, Error | null>(
    async (entries) => {
      try {
        await this.radius.rewriteMany(entries);
        return entries.map(() => null);
      } catch {
        return Promise.all(
          entries.map(({ username, user }) =>
            this.radius.rewrite(username, user).then(
              () => null,
              (error: Error) => error,
            ),
          ),
        );
      }
    },
  );

  constructor(
    private readonly radius: RadiusRepository,
    private readonly dynamic: DynamicAuthorization,
  ) {}

  async apply(
    order: ProvisioningOrder,
    service: Service,
    plan: ServicePlan,
    pools: ServicePools = NO_POOLS,
  ): Promise<DriverOutcome> {
    let sessions: RadiusSession[];
    try {
      this.groupsReady ??= this.radius.ensureSuspendedGroup().catch((error: unknown) => {
        this.groupsReady = null;
        throw error;
      });
      await this.groupsReady;
      // Awaited only the first time: an order whose group is known joins its batch in the same turn as the others.
      if (
        service.status === ServiceStatus.Suspended &&
        !this.groupsMade.has(suspendedGroupOf(service.radiusUsername))
      ) {
        await this.ensureTenantGroup(service);
      }
      const failed = await this.writes.submit({
        username: service.radiusUsername,
        user: radiusUser(service, plan, pools),
      });
      if (failed) {
        throw failed;
      }
      // Only a Disconnect or a CoA needs the sessions.
      sessions = REACHES_SESSIONS.includes(order.action)
        ? await this.radius.openSessions(service.radiusUsername)
        : [];
    } catch (error) {
      // The RADIUS database unreachable, a lock timeout, a failover: worth another try later.
      throw new DriverError(`radius-sql: ${(error as Error).message}`, true);
    }
    switch (order.action) {
      case OrderAction.Suspend:
      case OrderAction.Terminate:
      case OrderAction.CapBlock:
        return { disconnect: await this.reach(service.tenantId, sessions, 'Disconnect-Request', []) };
      case OrderAction.ChangePlan:
      case OrderAction.CapThrottle:
      case OrderAction.CapRestore:
        // The rate the service has now (its new plan's, its throttle rate, or its own again), burst included.
        return {
          coa: await this.reach(service.tenantId, sessions, 'CoA-Request', coaRate(service, plan)),
        };
      case OrderAction.Activate:
      case OrderAction.Resume:
      case OrderAction.Modify:
        // The next login gets the new answer; a session running meanwhile was allowed and stays so.
        return {};
    }
  }

  /**
   * The tenant's suspension mode or walled garden changed: its suspended group is rewritten from `profile` (and the
   * tenant's usernames still in the legacy shared group moved into it), then every open session of a username in the
   * group is sent a Disconnect-Request, so the subscriber logs in again into the new profile. Idempotent.
   */
  async suspensionChanged(
    tenantId: string,
    realm: string,
    profile: SuspensionProfile,
  ): Promise<SuspensionChangeOutcome> {
    const group = suspendedGroupOf(realm);
    let sessions: RadiusSession[];
    try {
      await this.radius.rewriteGroup(group, suspendedGroupRows(profile), realm);
      this.tenantGroups.set(group, Promise.resolve());
      this.groupsMade.add(group);
      sessions = await this.radius.openSessionsInGroup(group);
    } catch (error) {
      throw new DriverError(`radius-sql: ${(error as Error).message}`, true);
    }
    return {
      sessions: sessions.length,
      disconnect: await this.reach(tenantId, sessions, 'Disconnect-Request', []),
    };
  }

  close(): Promise<void> {
    return this.radius.close();
  }

  /** The service's tenant's suspended group, written from its settings if it has no rows yet (once per process). */
  private async ensureTenantGroup(service: Service): Promise<void> {
    const group = suspendedGroupOf(service.radiusUsername);
    let ready = this.tenantGroups.get(group);
    if (!ready) {
      ready = (async () => {
        const profile = (await this.dynamic.suspension?.(service.tenantId)) ?? DEFAULT_SUSPENSION_PROFILE;
        await this.radius.ensureGroup(group, suspendedGroupRows(profile));
        this.groupsMade.add(group);
      })().catch((error: unknown) => {
        this.tenantGroups.delete(group);
        throw error;
      });
      this.tenantGroups.set(group, ready);
    }
    await ready;
  }

  /** Sends the request to the NAS of every open session; answers the worst outcome. */
  private async reach(
    tenantId: string,
    sessions: RadiusSession[],
    code: DynamicRequestCode,
    extra: DynamicAttribute[],
  ): Promise<SessionOutcome> {
    if (sessions.length === 0) {
      return SessionOutcome.NoSession;
    }
    const outcomes: SessionOutcome[] = await Promise.all(
      sessions.map(async (session) => {
        const nas = await this.dynamic.nasAt(tenantId, session.nasIp);
        if (!nas) {
          return SessionOutcome.UnknownNas;
        }
        try {
          const answer = await sendDynamicRequest({
            code,
            host: nas.ip,
            port: nas.coaPort,
            secret: nas.secret,
            attributes: [
              ['User-Name', session.username],
              ['Acct-Session-Id', session.acctSessionId],
              ['NAS-IP-Address', session.nasIp],
              ...(session.framedIp ? [['Framed-IP-Address', session.framedIp] as DynamicAttribute] : []),
              ...extra,
            ],
            timeoutMs: this.dynamic.timeoutMs,
            retries: this.dynamic.retries,
          });
          return answer === 'acked'
            ? SessionOutcome.Acked
            : answer === 'nak'
              ? SessionOutcome.Nak
              : SessionOutcome.Timeout;
        } catch (error) {
          // The socket itself failed (no route to the NAS): as good as no answer; said in the log.
          this.logger.warn({
            msg: `${code} could not be sent`,
            nas_id: nas.id,
            err: (error as Error).message,
          });
          return SessionOutcome.Timeout;
        }
      }),
    );
    return SEVERITY.find((outcome) => outcomes.includes(outcome)) ?? SessionOutcome.Acked;
  }
}
