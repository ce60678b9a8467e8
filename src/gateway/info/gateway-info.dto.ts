import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ApiInteger } from '../../common/swagger/api-types';

@ApiSchema({
  description:
    'How many failed authentications an IP may make in a window before it is blocked, and for how long.',
})
class AbuseThresholdDto {
  @ApiInteger({ example: 20, minimum: 1, description: 'Failed authentications an IP may make per window.' })
  failed_authentications: number;
  @ApiInteger({ example: 300, minimum: 1, description: 'The window they are counted over, in seconds.' })
  window_seconds: number;
  @ApiInteger({
    example: 900,
    minimum: 1,
    description: 'How long an IP past the limit is refused, in seconds.',
  })
  block_seconds: number;
}

@ApiSchema({ description: 'Where the documentation, the document and the health probes are.' })
class GatewayLinksDto {
  @ApiProperty({ example: '/docs' }) docs: string;
  @ApiProperty({ example: '/docs/openapi.json' }) openapi: string;
  @ApiProperty({ example: '/health/ready' }) health: string;
  @ApiProperty({ example: '/api/v1/events' }) events: string;
}

@ApiSchema({ description: 'The request budget per window, and the headers that report it.' })
class RateLimitPolicyDto {
  @ApiInteger({ example: 600, minimum: 1, description: 'Requests allowed per window.' }) requests: number;
  @ApiInteger({ example: 60, minimum: 1, description: 'The window length, in seconds.' })
  window_seconds: number;
  @ApiProperty({
    example: 'token',
    description: 'Budgets are per token; per IP address before authentication.',
  })
  per: string;
  @ApiProperty({
    example: [
      'RateLimit-Policy',
      'RateLimit',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Retry-After',
    ],
  })
  headers: string[];
  @ApiProperty({ type: AbuseThresholdDto }) abuse_threshold: AbuseThresholdDto;
}

@ApiSchema({ description: 'How to authenticate: the scheme, the header and the scopes a token can hold.' })
class AuthenticationInfoDto {
  @ApiProperty({ example: 'bearer', description: 'The HTTP authentication scheme.' }) scheme: string;
  @ApiProperty({
    example: 'Authorization: Bearer <API_TOKEN>',
    description: 'The header that carries the token.',
  })
  header: string;
  @ApiProperty({
    example: 'X-Tenant-ID',
    description: 'The header a platform:admin token names another tenant with (id or slug).',
  })
  tenant_header: string;
}

@ApiSchema({ description: 'What the API is: version, authentication, rate limits and where to read more.' })
export class GatewayInfoDto {
  @ApiProperty({ example: 'ISP Subscriber, Billing and Automation API' }) name: string;
  @ApiProperty({ example: 'v1' }) api_version: string;
  @ApiProperty({ type: AuthenticationInfoDto }) authentication: AuthenticationInfoDto;
  @ApiProperty({ type: RateLimitPolicyDto }) rate_limit: RateLimitPolicyDto;
  @ApiProperty({ type: GatewayLinksDto }) links: GatewayLinksDto;
}

@ApiSchema({ description: 'The calling token and the tenant this request acts for.' })
export class MeDto {
  @ApiProperty({
    example: 'tok_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The token that made this request.',
  })
  token_id: string;
  @ApiProperty({
    example: 'ten_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The tenant this request acts for.',
  })
  tenant_id: string;
  @ApiProperty({ example: 'default', description: 'The slug of the tenant this request acts for.' })
  tenant_slug: string;
  @ApiProperty({ example: 'ten_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The tenant the token belongs to.' })
  token_tenant_id: string;
  @ApiProperty({ example: ['subscribers:*'], description: 'The scopes the token holds.' }) scopes: string[];
}
