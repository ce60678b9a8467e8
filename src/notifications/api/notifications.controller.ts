import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import type { Page } from '../../common/envelope/envelope';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../../common/swagger/api-envelope';
import { ListNotificationsQueryDto, NotificationDetailDto, NotificationDto } from '../dto/notification.dto';
import { NotificationsService } from './notifications.service';

@ApiTags('Notifications')
// The object of notification.sent / notification.failed events (their webhook payloads).
@ApiExtraModels(NotificationDto)
@ApiBearerAuth()
@Controller('api/v1/notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Get()
  @RequireScopes('notifications:read')
  @ApiOperation({
    summary: 'List notifications',
    description:
      'The messages sent (or to be sent, or skipped) to subscribers, newest first, each with its attempts: what the ' +
      'mail server answered each time. Filter by `subscriber_id`, `kind` and `status`.',
  })
  @ApiEnvelope(NotificationDetailDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  listNotifications(
    @Auth() auth: AuthContext,
    @Query() query: ListNotificationsQueryDto,
  ): Promise<Page<NotificationDetailDto>> {
    return this.notifications.list(auth.tenantId, query);
  }

  @Get(':id')
  @RequireScopes('notifications:read')
  @ApiOperation({
    summary: 'Get a notification',
    description: 'One notification with every attempt at sending it. 404 `not_found` for an unknown id.',
  })
  @ApiEnvelope(NotificationDetailDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  getNotification(@Auth() auth: AuthContext, @Param('id') id: string): Promise<NotificationDetailDto> {
    return this.notifications.get(auth.tenantId, id);
  }
}
