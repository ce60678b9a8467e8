import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { PORTAL_GATE, type PortalGate, type PortalPrincipal } from '../../common/auth/portal';

/**
 * Portal session tokens as the gateway sees them (docs/portal.md): authenticated by the portal module's PortalGate,
 * found at run time so that the gateway imports nothing above it, once per request (the rate limiter keys the
 * request by its session's subscriber before the auth guard admits it, and both ask).
 */
@Injectable()
export class PortalSessions {
  private gate: PortalGate | null = null;
  private readonly lookups = new WeakMap<object, Promise<PortalPrincipal | null>>();

  constructor(private readonly moduleRef: ModuleRef) {}

  /** The live session whose token the request carries, or null; looked up once per request. */
  authenticateRequest(request: object, secret: string): Promise<PortalPrincipal | null> {
    let lookup = this.lookups.get(request);
    if (!lookup) {
      this.gate ??= this.moduleRef.get<PortalGate>(PORTAL_GATE, { strict: false });
      lookup = this.gate.authenticate(secret);
      this.lookups.set(request, lookup);
    }
    return lookup;
  }
}
