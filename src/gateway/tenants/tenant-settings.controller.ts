import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { HonoursIfMatch } from '../../common/http/honours-if-match';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS, BODY_ERRORS } from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import { TenantSettingsDto, UpdateTenantSettingsDto } from './dto/tenant-settings.dto';
import { TenantSettingsService } from './tenant-settings.service';

// billing:read / billing:write: the settings are what billing's documents say about their issuer (TenantSettingsDto).
@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/tenant/settings')
export class TenantSettingsController {
  constructor(private readonly settings: TenantSettingsService) {}

  @Get()
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      "Returns the tenant as the issuer of its invoices and credit notes: legal name, address, tax and registration numbers, contact, payment instructions, invoice footer, the locale and time zone documents are written in, each numbering series' format, its own mail server for notifications (mail: the password never answered, password_set instead) and which kinds of notification it sends (notifications). A tenant that never changed them gets the defaults (locale en-US, time zone UTC, INV-{YYYY}-{seq:6} and CN-{YYYY}-{seq:6}, never restarting, mail null: the instance's server, every notification kind on) with updated_at null.",
    summary: "The tenant's issuer details and numbering series",
  })
  @ApiEnvelope(TenantSettingsDto)
  @ApiErrors(...AUTH_ERRORS)
  getTenantSettings(@Auth() auth: AuthContext): Promise<TenantSettingsDto> {
    return this.settings.get(auth.tenantId);
  }

  @Patch()
  @RequireScopes('billing:write')
  @ApiOperation({
    description:
      'Changes the fields sent and leaves the others; null clears an optional field (null for address, contact or mail clears every part). mail.password is write-only: left out it stays, null clears it. A mail host that is or resolves to a private, loopback or link-local address is refused (422, field mail.host) unless MAIL_ALLOW_PRIVATE. A new number format applies to documents numbered afterwards, and the sequence goes on. Honours If-Match (412 `precondition_failed` on a stale tag) and emits `tenant_settings.updated` naming the changed fields.',
    summary: "Change the tenant's issuer details or numbering series",
  })
  @ApiEnvelope(TenantSettingsDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS)
  @ApiExampleBody(UpdateTenantSettingsDto, {
    legal_name: 'Acme Fiber, Lda.',
    address: { line1: 'Rua Augusta 100', city: 'Lisboa', postal_code: '1100-053', country: 'PT' },
    tax_id: 'PT509999999',
    locale: 'pt-PT',
    time_zone: 'Europe/Lisbon',
  })
  @HonoursIfMatch()
  updateTenantSettings(
    @Auth() auth: AuthContext,
    @Body() dto: UpdateTenantSettingsDto,
  ): Promise<TenantSettingsDto> {
    return this.settings.update(auth, dto);
  }
}
