import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import type { AuthContext } from '../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS, BODY_ERRORS } from '../common/swagger/api-envelope';
import { ApiExampleBody } from '../common/swagger/api-types';
import { NetworkSettingsDto, UpdateNetworkSettingsDto } from './dto/network-settings.dto';
import { NetworkSettingsService } from './network-settings.service';

@ApiTags('Network')
@ApiBearerAuth()
@Controller('api/v1/network-settings')
export class NetworkSettingsController {
  constructor(private readonly settings: NetworkSettingsService) {}

  @Get()
  @RequireScopes('provisioning:read')
  @ApiOperation({
    description:
      "Returns what a suspended service's login gets: rejected (suspension_mode reject, the default) or accepted into a walled garden (walled_garden: the address list and Filter-Id the NAS maps to a redirect to payment_page_url), and whether the network has the latest change (applied). A tenant that never changed them gets the defaults with updated_at null.",
    summary: "The tenant's suspension mode and walled garden",
  })
  @ApiEnvelope(NetworkSettingsDto)
  @ApiErrors(...AUTH_ERRORS)
  getNetworkSettings(@Auth() auth: AuthContext): Promise<NetworkSettingsDto> {
    return this.settings.get(auth.tenantId);
  }

  @Patch()
  @RequireScopes('provisioning:write')
  @ApiOperation({
    description:
      "Changes the fields sent and leaves the others (null clears payment_page_url). walled_garden needs a payment_page_url (422, field payment_page_url). A change is carried to the network by the provisioning worker right after: the tenant's suspended services move to the new profile (their RADIUS group is rewritten) and their sessions online get a Disconnect-Request, so they log in again into it; applied is false until then. Emits `network_settings.updated` naming the changed fields.",
    summary: "Change the tenant's suspension mode or walled garden",
  })
  @ApiEnvelope(NetworkSettingsDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS)
  @ApiExampleBody(UpdateNetworkSettingsDto, {
    suspension_mode: 'walled_garden',
    payment_page_url: 'https://pay.acme-fiber.example/suspended',
  })
  updateNetworkSettings(
    @Auth() auth: AuthContext,
    @Body() dto: UpdateNetworkSettingsDto,
  ): Promise<NetworkSettingsDto> {
    return this.settings.update(auth, dto);
  }
}
