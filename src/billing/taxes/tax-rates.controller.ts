import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { Page } from '../../common/envelope/envelope';
import { HonoursIfMatch } from '../../common/http/honours-if-match';
import type { AuthContext } from '../../common/request-context';
import {
  ApiEnvelope,
  ApiErrors,
  AUTH_ERRORS,
  BODY_ERRORS,
  IDEMPOTENCY_ERRORS,
} from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import { CreateTaxRateDto, ListTaxRatesQueryDto, TaxRateDto, UpdateTaxRateDto } from './dto/tax-rate.dto';
import { TaxRatesService } from './tax-rates.service';

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/tax-rates')
export class TaxRatesController {
  constructor(private readonly rates: TaxRatesService) {}

  @Post()
  @HttpCode(201)
  @RequireScopes('billing:write')
  @ApiOperation({
    description:
      'Creates a tax rate that billing profiles (their defaults), service plans and charges name in `tax_rate_ids`. Emits `tax_rate.created`.',
    summary: 'Create a tax rate',
  })
  @ApiEnvelope(TaxRateDto, { status: 201 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS)
  @ApiExampleBody(CreateTaxRateDto, { name: 'VAT 21%', percentage: '21', country: 'NL' })
  async createTaxRate(@Auth() auth: AuthContext, @Body() dto: CreateTaxRateDto): Promise<TaxRateDto> {
    return this.rates.create(auth, dto);
  }

  @Get()
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      "Lists the tenant's tax rates, newest first, with cursor pagination; `active` keeps the active or the archived ones. Read-only.",
    summary: 'List tax rates',
  })
  @ApiEnvelope(TaxRateDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listTaxRates(
    @Auth() auth: AuthContext,
    @Query() query: ListTaxRatesQueryDto,
  ): Promise<Page<TaxRateDto>> {
    return (await this.rates.list(auth.tenantId, query)).map(TaxRateDto.from);
  }

  @Get(':id')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Returns one tax rate with its ETag. 404 `not_found` when the tenant has no rate with this id.',
    summary: 'Get a tax rate',
  })
  @ApiEnvelope(TaxRateDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getTaxRate(@Auth() auth: AuthContext, @Param('id') id: string): Promise<TaxRateDto> {
    return TaxRateDto.from(await this.rates.getById(auth.tenantId, id));
  }

  @Patch(':id')
  @RequireScopes('billing:write')
  @ApiOperation({
    description:
      'Changes the fields sent and leaves the others as they are. A rate an invoice has used (`first_used_at` set) is never edited in place: changing its name, percentage, inclusive, compound, country or region answers 409 `tax_rate_in_use`; archive it (`active: false`) and create a new one. Honours If-Match (412 `precondition_failed` on a stale tag) and emits `tax_rate.updated` naming the changed fields.',
    summary: 'Change or archive a tax rate',
  })
  @ApiEnvelope(TaxRateDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found', 'tax_rate_in_use')
  @ApiExampleBody(UpdateTaxRateDto, { active: false })
  @HonoursIfMatch()
  async updateTaxRate(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: UpdateTaxRateDto,
  ): Promise<TaxRateDto> {
    return this.rates.update(auth, id, dto);
  }
}
