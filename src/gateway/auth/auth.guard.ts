import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiError } from '../../common/errors/api-error';
import { requestContext } from '../../common/request-context';
import { AbuseService } from '../rate-limit/abuse.service';
import { TenantTime } from '../clocks/tenant-time';
import { TenantsService } from '../tenants/tenants.service';
import { TokensService } from '../tokens/tokens.service';
import { IS_PUBLIC, REQUIRED_SCOPES } from '../../common/auth/auth.decorators';
import { PortalSessions } from './portal-sessions';
import { bearerToken, clientIp } from './request-credentials';
import { hasScope, type Scope } from '../../common/auth/scopes';
import {
  PORTAL_ONLY,
  PORTAL_SCOPE,
  PORTAL_TOKEN_PREFIX,
  type PortalPrincipal,
} from '../../common/auth/portal';
import { portalRuleOf } from '../../common/auth/portal-policy';

/** Closed by default: every route needs a live bearer token unless it is marked @Public(). */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokensService,
    private readonly tenants: TenantsService,
    private readonly abuse: AbuseService,
    private readonly tenantTime: TenantTime,
    private readonly portalSessions: PortalSessions,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) {
      return true;
    }

    const req = context.switchToHttp().getRequest<Request>();
    const secret = bearerToken(req);
    if (!secret) {
      throw new ApiError(
        'authentication_required',
        'A bearer token is required: Authorization: Bearer <token>.',
        null,
        {
          'WWW-Authenticate': 'Bearer',
        },
      );
    }
    if (secret.startsWith(PORTAL_TOKEN_PREFIX)) {
      return this.admitPortal(context, req, secret);
    }
    const token = await this.tokens.authenticateRequest(req, secret);
    if (!token) {
      await this.abuse.recordAuthFailure(clientIp(req));
      throw new ApiError('invalid_token', 'The bearer token is unknown, revoked or expired.', null, {
        'WWW-Authenticate': 'Bearer error="invalid_token"',
      });
    }

    const tenantId = await this.resolveTenant(req, token.tenantId, token.scopes);
    if (this.reflector.getAllAndOverride<boolean>(PORTAL_ONLY, targets)) {
      throw insufficientScope(PORTAL_SCOPE);
    }
    const required = this.reflector.getAllAndOverride<Scope[] | undefined>(REQUIRED_SCOPES, targets) ?? [];
    const missing = required.filter((scope) => !hasScope(token.scopes, scope));
    if (missing.length > 0) {
      throw insufficientScope(missing.join(' '));
    }

    const store = requestContext.get();
    if (store) {
      store.auth = { tokenId: token.id, tenantId, tokenTenantId: token.tenantId, scopes: token.scopes };
      // A test tenant's request reads its clock's time in every record it writes and every date it reasons with.
      store.frozenAt = (await this.tenantTime.frozenAt(tenantId)) ?? undefined;
    }
    return true;
  }

  /**
   * A portal session token (docs/portal.md): it may call only the operations of PORTAL_OPERATIONS (deny by default),
   * in its own tenant; the portal module's interceptor then holds each to the session's subscriber.
   */
  private async admitPortal(context: ExecutionContext, req: Request, secret: string): Promise<boolean> {
    const principal = await this.portalSessions.authenticateRequest(req, secret);
    if (!principal) {
      await this.abuse.recordAuthFailure(clientIp(req));
      throw new ApiError('invalid_token', 'The bearer token is unknown, revoked or expired.', null, {
        'WWW-Authenticate': 'Bearer error="invalid_token"',
      });
    }
    const tenantId = await this.resolveTenant(req, principal.tenantId, [PORTAL_SCOPE]);
    if (!portalRuleOf(context.getHandler().name)) {
      throw new ApiError(
        'insufficient_scope',
        'A portal session may not call this endpoint; it needs an API token (docs/portal.md).',
        null,
        { 'WWW-Authenticate': 'Bearer error="insufficient_scope"' },
      );
    }
    await this.admit(principal, tenantId);
    return true;
  }

  private async admit(principal: PortalPrincipal, tenantId: string): Promise<void> {
    const store = requestContext.get();
    if (store) {
      store.auth = {
        tokenId: principal.sessionId,
        tenantId,
        tokenTenantId: principal.tenantId,
        scopes: [PORTAL_SCOPE],
        portal: { subscriberId: principal.subscriberId },
      };
      store.frozenAt = (await this.tenantTime.frozenAt(tenantId)) ?? undefined;
    }
  }

  /** X-Tenant-ID (id or slug) picks the tenant to act for; only platform:admin may act for another tenant. */
  private async resolveTenant(req: Request, ownTenantId: string, scopes: string[]): Promise<string> {
    const header = req.headers['x-tenant-id'];
    const requested = Array.isArray(header) ? header[0] : header;
    if (!requested) {
      return ownTenantId;
    }
    const tenant = requested.length <= 64 ? await this.tenants.findByIdOrSlug(requested) : null;
    if (tenant && (tenant.id === ownTenantId || hasScope(scopes, 'platform:admin'))) {
      return tenant.id;
    }
    throw new ApiError('tenant_forbidden', 'This token may not act for the tenant named in X-Tenant-ID.');
  }
}

/** RFC 6750 §3: a token lacking scope is told so, and which scope would do, in the challenge. */
function insufficientScope(scope: string): ApiError {
  return new ApiError(
    'insufficient_scope',
    `This endpoint requires the scope ${scope.split(' ').join(', ')}.`,
    null,
    {
      'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"`,
    },
  );
}
