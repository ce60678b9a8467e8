import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { HonoursIfMatch } from '../../common/http/honours-if-match';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS, BODY_ERRORS } from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import {
  LEGAL_NOTICE_KINDS,
  NotificationPreferencesDto,
  UpdateNotificationPreferencesDto,
} from '../dto/notification-preferences.dto';
import { NotificationPreferencesService } from './notification-preferences.service';

const LEGAL = LEGAL_NOTICE_KINDS.join(', ');

// subscribers:read / subscribers:write: the preferences are the subscriber's own choice, a part of its record kept by
// notifications (the subscriber's answer and statements stay as they are).
@ApiTags('Notifications')
@ApiBearerAuth()
@Controller('api/v1/subscribers/:id/notification-preferences')
export class NotificationPreferencesController {
  constructor(private readonly preferences: NotificationPreferencesService) {}

  @Get()
  @RequireScopes('subscribers:read')
  @ApiOperation({
    summary: "A subscriber's notification preferences",
    description:
      `Which kinds of notification the subscriber is sent: every kind is true until switched off, and legal notices and portal sign-in mail (${LEGAL}) are always true. ` +
      'updated_at is null while the subscriber never changed one. A kind the tenant switched off (notifications in GET /tenant/settings) is not sent whatever the subscriber says. ' +
      '404 `not_found` for an unknown subscriber.',
  })
  @ApiEnvelope(NotificationPreferencesDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  getNotificationPreferences(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
  ): Promise<NotificationPreferencesDto> {
    return this.preferences.get(auth.tenantId, id);
  }

  @Patch()
  @RequireScopes('subscribers:write')
  @ApiOperation({
    summary: 'Switch kinds of notification on or off for a subscriber',
    description:
      `Each kind sent is switched on (true) or off (false); kinds left out stay. A legal notice (${LEGAL}) cannot be switched off: ` +
      'false is 422 `validation_failed` naming the kind, true changes nothing. An archived subscriber is read-only (409 `invalid_state_transition`). ' +
      'Honours If-Match (412 `precondition_failed` on a stale tag). Emits `notification_preferences.updated` naming the kinds that changed; a PATCH that changes nothing emits none.',
  })
  @ApiEnvelope(NotificationPreferencesDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found', 'invalid_state_transition')
  @ApiExampleBody(UpdateNotificationPreferencesDto, { payment_received: false, ticket_reply: true })
  @HonoursIfMatch()
  updateNotificationPreferences(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: UpdateNotificationPreferencesDto,
  ): Promise<NotificationPreferencesDto> {
    return this.preferences.update(auth, id, dto);
  }
}
