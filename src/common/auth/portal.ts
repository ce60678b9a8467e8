import { SetMetadata } from '@nestjs/common';

/**
 * Subscriber-scoped access (docs/portal.md). A portal session token is a bearer token like an API token, but it holds
 * the one scope `portal` and is bound to one subscriber: the gateway lets it call only the operations of
 * PORTAL_OPERATIONS (src/common/auth/portal-policy.ts), and the portal module holds each of them to that subscriber.
 */
export const PORTAL_SCOPE = 'portal';

/** What a portal session token's secret starts with (an API token's is `isk_`). */
export const PORTAL_TOKEN_PREFIX = 'ipt_';

/** The injection token of the PortalGate the portal module provides; the auth guard finds it at run time. */
export const PORTAL_GATE = Symbol('PORTAL_GATE');

/** A live portal session, as the gateway sees it. */
export interface PortalPrincipal {
  sessionId: string;
  tenantId: string;
  subscriberId: string;
}

/** Authenticates a portal session token (the portal module's, so the gateway need not import it). */
export interface PortalGate {
  authenticate(secret: string): Promise<PortalPrincipal | null>;
}

export const PORTAL_ONLY = 'isp:portal-only';

/** A route only a portal session may call (its own session); an API token gets 403 `insufficient_scope`. */
export const PortalOnly = () => SetMetadata(PORTAL_ONLY, true);
