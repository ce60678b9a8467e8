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

/**
 * The injection token of the PortalCodeMinter the portal module provides: the notifications worker finds it at run
 * time (as the auth guard finds PORTAL_GATE), so notifications never reads the portal's tables.
 */
export const PORTAL_CODE_MINTER = Symbol('PORTAL_CODE_MINTER');

/** What a portal mail carries: the one-time code, and the link that holds it (null without PORTAL_URL). */
export interface MintedPortalCode {
  code: string;
  link: string | null;
}

/**
 * Mints the secret of a portal mail at send time (docs/decisions.md): a fresh code whose hash replaces the row's, so
 * only the message holds it; a retry mints another and the earlier one stops working. Null when the invite or the
 * sign-in code can no longer sign in (used, superseded, expired, dead), and nothing is to be sent.
 */
export interface PortalCodeMinter {
  mint(what: 'invite' | 'sign_in_code', tenantId: string, id: string): Promise<MintedPortalCode | null>;
}
