import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn } from 'class-validator';
import { IsTimestamp } from '../../../common/validation/is-date-only';
import { IsTrimmedText } from '../../../common/validation/text';
import { SCOPES, type Scope } from '../../../common/auth/scopes';
import { ApiToken } from '../api-token.entity';
import { Optional } from '../../../common/validation/optional';

@ApiSchema({ description: 'A new API token: a name and the scopes it may use.' })
export class CreateTokenDto {
  @ApiPropertyOptional({
    example: 'acme-fiber',
    description:
      'Tenant id or slug the token belongs to; defaults to the tenant the request acts for. ' +
      "Another tenant than the caller's own needs `platform:admin` (403 `tenant_forbidden`).",
  })
  @Optional()
  @IsTrimmedText(64)
  tenant?: string;

  @ApiProperty({ example: 'billing sync' })
  @IsTrimmedText(200)
  name: string;

  @ApiProperty({
    enum: SCOPES,
    isArray: true,
    example: ['subscribers:*', 'billing:read'],
    description:
      '`<domain>:*` grants read and write of the domain; `admin` manages its own tenant and implies every data ' +
      'scope there; `platform:admin` manages tenants, may act for any tenant, and implies `admin`. Only scopes the ' +
      'calling token holds may be granted (403 `insufficient_scope`). `tickets:read|write` cover support tickets, their ' +
      'comments and settings; `provisioning:read|write` service plans, services, orders, NAS devices and network sessions.',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SCOPES.length)
  @IsIn(SCOPES, { each: true, message: `each scope must be one of ${SCOPES.join(', ')}` })
  scopes: Scope[];

  @ApiPropertyOptional({
    example: '2027-11-21T00:00:00.000Z',
    description: 'Omitted: the token does not expire.',
  })
  @Optional()
  @IsTimestamp()
  expires_at?: string;
}

@ApiSchema({ description: 'An API token, without its secret.' })
export class TokenResponseDto {
  @ApiProperty({ example: 'tok_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'ten_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The tenant it acts for.' })
  tenant_id: string;

  @ApiProperty({ example: 'billing sync' })
  name: string;

  @ApiProperty({ example: 'isk_AbCd', description: 'The first characters of the token, for recognising it.' })
  prefix: string;

  @ApiProperty({ example: 'x9Yz', description: 'The last four characters of the token, for recognising it.' })
  last4: string;

  @ApiProperty({
    enum: SCOPES,
    isArray: true,
    description: 'What it may do (README, "Tokens, scopes and tenants").',
  })
  scopes: string[];

  @ApiProperty({ nullable: true, type: String, description: 'When it stops working; null: never.' })
  expires_at: string | null;

  @ApiProperty({ nullable: true, type: String, description: 'When it was revoked; null while not revoked.' })
  revoked_at: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When it last authenticated a request (refreshed at most once a minute); null: never used.',
  })
  last_used_at: string | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  static from(token: ApiToken): TokenResponseDto {
    return {
      id: token.id,
      tenant_id: token.tenantId,
      name: token.name,
      prefix: token.prefix,
      last4: token.last4,
      scopes: token.scopes,
      expires_at: token.expiresAt?.toISOString() ?? null,
      revoked_at: token.revokedAt?.toISOString() ?? null,
      last_used_at: token.lastUsedAt?.toISOString() ?? null,
      created_at: token.createdAt.toISOString(),
    };
  }
}

@ApiSchema({ description: 'A token just issued, with its secret: shown this once, never again.' })
export class IssuedTokenResponseDto extends TokenResponseDto {
  @ApiProperty({ example: 'isk_4m9…', description: 'The secret. Shown in this response only; store it now.' })
  token: string;
}
