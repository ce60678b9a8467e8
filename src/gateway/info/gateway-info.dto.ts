import { ApiProperty } from '@nestjs/swagger';

class RateLimitPolicyDto {
  @ApiProperty({ example: 600 }) requests: number;
  @ApiProperty({ example: 60 }) window_seconds: number;
  @ApiProperty({
    example: 'token',
    description: 'Budgets are per token; per IP address before authentication.',
  })
  per: string;
  @ApiProperty({ example: ['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'Retry-After'] })
  headers: string[];
  @ApiProperty({ example: { failed_authentications: 20, window_seconds: 300, block_seconds: 900 } })
  abuse_threshold: { failed_authentications: number; window_seconds: number; block_seconds: number };
}

class AuthenticationInfoDto {
  @ApiProperty({ example: 'bearer' }) scheme: string;
  @ApiProperty({ example: 'Authorization: Bearer <API_TOKEN>' }) header: string;
  @ApiProperty({ example: 'X-Tenant-ID' }) tenant_header: string;
}

export class GatewayInfoDto {
  @ApiProperty({ example: 'ISP Subscriber, Billing and Automation API' }) name: string;
  @ApiProperty({ example: 'v1' }) api_version: string;
  @ApiProperty({ type: AuthenticationInfoDto }) authentication: AuthenticationInfoDto;
  @ApiProperty({ type: RateLimitPolicyDto }) rate_limit: RateLimitPolicyDto;
  @ApiProperty({ example: { docs: '/docs', openapi: '/docs/openapi.json', health: '/health/ready' } })
  links: Record<string, string>;
}

export class MeDto {
  @ApiProperty({ example: 'tok_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) token_id: string;
  @ApiProperty({
    example: 'ten_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The tenant this request acts for.',
  })
  tenant_id: string;
  @ApiProperty({ example: 'default' }) tenant_slug: string;
  @ApiProperty({ example: 'ten_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The tenant the token belongs to.' })
  token_tenant_id: string;
  @ApiProperty({ example: ['subscribers:*'] }) scopes: string[];
}
