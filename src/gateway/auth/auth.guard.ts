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
import { bearerToken, clientIp } from './request-credentials';
import { hasScope, type Scope } from '../../common/auth/scopes';

/** Closed by default: every route needs a live bearer token unless it is marked @Public(). */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokensService,
    private readonly tenants: TenantsService,
    private readonly abuse: AbuseService,
    private readonly tenantTime: TenantTime,
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
    const token = await this.tokens.authenticateRequest(req, secret);
    if (!token) {
      await this.abuse.recordAuthFailure(clientIp(req));
      throw new ApiError('invalid_token', 'The bearer token is unknown, revoked or expired.', null, {
        'WWW-Authenticate': 'Bearer error="invalid_token"',
      });
    }

    const tenantId = await this.resolveTenant(req, token.tenantId, token.scopes);
    const required = this.reflector.getAllAndOverride<Scope[] | undefined>(REQUIRED_SCOPES, targets) ?? [];
    const missing = required.filter((scope) => !hasScope(token.scopes, scope));
    if (missing.length > 0) {
      // RFC 6750 §3: a token lacking scope is told so, and which scope would do, in the challenge.
      throw new ApiError(
        'insufficient_scope',
        `This endpoint requires the scope ${missing.join(', ')}.`,
        null,
        {
          'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${missing.join(' ')}"`,
        },
      );
    }

    const store = requestContext.get();
    if (store) {
      store.auth = { tokenId: token.id, tenantId, tokenTenantId: token.tenantId, scopes: token.scopes };
      // A test tenant's request reads its clock's time in every record it writes and every date it reasons with.
      store.frozenAt = (await this.tenantTime.frozenAt(tenantId)) ?? undefined;
    }
    return true;
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
