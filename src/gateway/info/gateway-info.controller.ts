import { Controller, Get, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { API_VERSION } from '../../common/envelope/envelope';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../../common/swagger/api-envelope';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { Auth, Public } from '../../common/auth/auth.decorators';
import { TenantsService } from '../tenants/tenants.service';
import { GatewayInfoDto, MeDto } from './gateway-info.dto';

@ApiTags('Gateway')
@Controller('api/v1')
export class GatewayInfoController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tenants: TenantsService,
  ) {}

  @Get()
  @Public()
  @ApiOperation({
    description:
      'Says what this API is before your first real call: its version, how to authenticate, and the rate-limit policy that applies to you. Public: no token, no side effects.',
    summary: 'Version, authentication scheme and rate limits, before the first real call',
  })
  @ApiEnvelope(GatewayInfoDto)
  @ApiErrors()
  getApiInfo(): GatewayInfoDto {
    const { rateLimit, abuse } = this.config;
    return {
      name: 'ISP Subscriber, Billing and Automation API',
      api_version: API_VERSION,
      authentication: {
        scheme: 'bearer',
        header: 'Authorization: Bearer <API_TOKEN>',
        tenant_header: 'X-Tenant-ID',
      },
      rate_limit: {
        requests: rateLimit.max,
        window_seconds: rateLimit.windowS,
        per: 'token',
        headers: [
          'RateLimit-Policy',
          'RateLimit',
          'X-RateLimit-Limit',
          'X-RateLimit-Remaining',
          'X-RateLimit-Reset',
          'Retry-After',
        ],
        abuse_threshold: {
          failed_authentications: abuse.authFailuresMax,
          window_seconds: abuse.windowS,
          block_seconds: abuse.blockS,
        },
      },
      links: {
        docs: '/docs',
        openapi: '/docs/openapi.json',
        health: '/health/ready',
        events: '/api/v1/events',
      },
    };
  }

  @Get('me')
  @ApiBearerAuth()
  @ApiOperation({
    description:
      'Returns the calling token (id, name, scopes) and the tenant this request acts for, taking `X-Tenant-ID` into account. Use it to check a token before anything else; it changes nothing.',
    summary: 'The calling token: its id, scopes and the tenant this request acts for',
  })
  @ApiEnvelope(MeDto)
  @ApiErrors(...AUTH_ERRORS)
  async getCurrentToken(@Auth() auth: AuthContext): Promise<MeDto> {
    const tenant = await this.tenants.findByIdOrSlug(auth.tenantId);
    return {
      token_id: auth.tokenId,
      tenant_id: auth.tenantId,
      tenant_slug: tenant?.slug ?? '',
      token_tenant_id: auth.tokenTenantId,
      scopes: auth.scopes,
    };
  }
}
