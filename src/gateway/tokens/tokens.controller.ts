import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Page } from '../../common/envelope/envelope';
import { PageQueryDto } from '../../common/pagination';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { ReturnsSecret } from '../../common/http/returns-secret';
import { SkipIdempotency } from '../idempotency/idempotency.interceptor';
import { CreateTokenDto, IssuedTokenResponseDto, TokenResponseDto } from './dto/token.dto';
import { TokensService } from './tokens.service';

@ApiTags('Admin')
@ApiBearerAuth()
@Controller('api/v1/tokens')
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Post()
  @HttpCode(201)
  @RequireScopes('admin')
  @SkipIdempotency() // the answer holds the secret, which is never stored
  @ReturnsSecret()
  @ApiOperation({
    summary: 'Issue an API token (admin); the secret is in this response only',
    description:
      'A token grants only scopes it holds: `admin` issues tokens of its own tenant with `admin` or narrower scopes; ' +
      'granting `platform:admin`, or issuing for another tenant, needs `platform:admin`.',
  })
  @ApiEnvelope(IssuedTokenResponseDto, { status: 201 })
  @ApiErrors(
    ...AUTH_ERRORS,
    'invalid_json',
    'missing_field',
    'unknown_field',
    'validation_failed',
    'invalid_reference',
  )
  @ApiExampleBody(CreateTokenDto, {
    tenant: 'acme-fiber',
    name: 'billing sync',
    scopes: ['subscribers:*', 'billing:*'],
  })
  async createToken(@Auth() auth: AuthContext, @Body() dto: CreateTokenDto): Promise<IssuedTokenResponseDto> {
    return this.tokens.issueAs(auth, dto);
  }

  @Get()
  @RequireScopes('admin')
  @ApiOperation({
    description:
      'Lists the API tokens of the tenant the request acts for: name, scopes, prefix and last four characters, last use, expiry and revocation, never the secret. Needs `admin`.',
    summary: 'List the tokens of the tenant the request acts for (admin)',
  })
  @ApiEnvelope(TokenResponseDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listTokens(@Auth() auth: AuthContext, @Query() query: PageQueryDto): Promise<Page<TokenResponseDto>> {
    return (await this.tokens.list(auth.tenantId, query)).map(TokenResponseDto.from);
  }

  @Delete(':id')
  @RequireScopes('admin')
  @ApiOperation({
    summary: 'Revoke a token (admin); it stops working at once',
    description: 'Revoking a token that holds a scope the caller does not (e.g. `platform:admin`) is 403.',
  })
  @ApiEnvelope(TokenResponseDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async revokeToken(@Auth() auth: AuthContext, @Param('id') id: string): Promise<TokenResponseDto> {
    return TokenResponseDto.from(await this.tokens.revoke(auth, auth.tenantId, id, auth.scopes));
  }
}
