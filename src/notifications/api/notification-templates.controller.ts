import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { HonoursIfMatch } from '../../common/http/honours-if-match';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS, BODY_ERRORS } from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import { SkipIdempotency } from '../../gateway';
import {
  NotificationPreviewDto,
  NotificationTemplateBodyDto,
  NotificationTemplateDto,
  PreviewNotificationTemplateDto,
} from '../dto/notification-template.dto';
import { NOTIFICATION_KINDS } from '../kinds';
import { NotificationTemplatesService } from './notification-templates.service';

const KIND_PARAM = ApiParam({
  name: 'kind',
  enum: NOTIFICATION_KINDS,
  description: 'A kind of notification (docs/notifications.md); any other name is 404 `not_found` on `kind`.',
});

@ApiTags('Notifications')
@ApiBearerAuth()
@Controller('api/v1/notification-templates')
export class NotificationTemplatesController {
  constructor(private readonly templates: NotificationTemplatesService) {}

  @Get()
  @RequireScopes('notifications:read')
  @ApiOperation({
    summary: 'List the template of every kind of notification',
    description:
      "One per kind: the tenant's own template (custom true) or the default shipped with the server (custom false, " +
      'updated_at null), each with the variables it may name.',
  })
  @ApiEnvelope(NotificationTemplateDto, { list: 'whole' })
  @ApiErrors(...AUTH_ERRORS)
  listNotificationTemplates(@Auth() auth: AuthContext): Promise<NotificationTemplateDto[]> {
    return this.templates.list(auth.tenantId);
  }

  @Get(':kind')
  @RequireScopes('notifications:read')
  @ApiOperation({
    summary: 'Get the template of one kind',
    description:
      "The tenant's own template of the kind, or the default while it has none, with its ETag. 404 `not_found` " +
      '(field `kind`) for a kind that does not exist.',
  })
  @KIND_PARAM
  @ApiEnvelope(NotificationTemplateDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  getNotificationTemplate(
    @Auth() auth: AuthContext,
    @Param('kind') kind: string,
  ): Promise<NotificationTemplateDto> {
    return this.templates.get(auth.tenantId, kind);
  }

  @Put(':kind')
  @RequireScopes('notifications:write')
  @ApiOperation({
    summary: "Save the tenant's own template of a kind",
    description:
      'Replaces the template the kind is sent with (subject, text and HTML, all three). Each part is checked before ' +
      'it is saved: a syntax error, a variable the kind does not have, a partial, an unescaped value (`{{{name}}}`, ' +
      '`{{& name}}`) in the HTML or the subject, or a subject of more than one line or 200 characters is 422 ' +
      '`validation_failed` on the part (`subject`, `text` or `html`), the message naming the tag, and every problem ' +
      'in `error.details`. Honours If-Match and emits `notification_template.updated`; a template sent unchanged is ' +
      'no change. 404 `not_found` (field `kind`) for a kind that does not exist.',
  })
  @KIND_PARAM
  @ApiEnvelope(NotificationTemplateDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found')
  @ApiExampleBody(NotificationTemplateBodyDto, {
    subject: 'Your invoice {{invoice.number}} from {{tenant.name}}',
    text:
      'Dear {{subscriber.name}},\n\nYour invoice {{invoice.number}} of {{invoice.total}} is due on ' +
      '{{invoice.due_date}}.\n{{#how_to_pay}}\nHow to pay:\n{{how_to_pay}}\n{{/how_to_pay}}\n\n{{tenant.name}}\n',
    html:
      '<p>Dear {{subscriber.name}},</p>\n<p>Your invoice <strong>{{invoice.number}}</strong> of ' +
      '{{invoice.total}} is due on {{invoice.due_date}}.</p>\n<p>{{tenant.name}}</p>\n',
  })
  @HonoursIfMatch()
  updateNotificationTemplate(
    @Auth() auth: AuthContext,
    @Param('kind') kind: string,
    @Body() dto: NotificationTemplateBodyDto,
  ): Promise<NotificationTemplateDto> {
    return this.templates.save(auth, kind, dto);
  }

  @Delete(':kind')
  @RequireScopes('notifications:write')
  @ApiOperation({
    summary: "Remove the tenant's own template of a kind: the default applies again",
    description:
      "Answers the tenant's template as it was. Emits `notification_template.deleted`; honours If-Match. 404 " +
      '`not_found` (field `kind`) for a kind that does not exist, or when the tenant has no template of its own ' +
      'for it.',
  })
  @KIND_PARAM
  @ApiEnvelope(NotificationTemplateDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  @HonoursIfMatch()
  deleteNotificationTemplate(
    @Auth() auth: AuthContext,
    @Param('kind') kind: string,
  ): Promise<NotificationTemplateDto> {
    return this.templates.remove(auth, kind);
  }

  @Post(':kind/preview')
  @HttpCode(200)
  @RequireScopes('notifications:read')
  @SkipIdempotency()
  @ApiOperation({
    summary: 'Render a template against a real record, without sending anything',
    description:
      "Builds the kind's message from the latest event of `record_id` that sends this kind (an invoice's " +
      "`invoice.finalized`, a ticket's latest public reply that is not the subscriber's own…), the subscriber and " +
      'the tenant as they are now, with `template` when sent (checked as PUT checks it, errors on `template.html`…) ' +
      'or else the template in use. Nothing is sent, stored or emitted, so an idempotency key is not needed. 422 ' +
      '`invalid_reference` on `record_id` when it names no such record of the tenant (the message says which record ' +
      'the kind needs); 404 `not_found` (field `kind`) for a kind that does not exist.',
  })
  @KIND_PARAM
  @ApiEnvelope(NotificationPreviewDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found', 'invalid_reference')
  @ApiExampleBody(PreviewNotificationTemplateDto, { record_id: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  previewNotificationTemplate(
    @Auth() auth: AuthContext,
    @Param('kind') kind: string,
    @Body() dto: PreviewNotificationTemplateDto,
  ): Promise<NotificationPreviewDto> {
    return this.templates.preview(auth.tenantId, kind, dto);
  }
}
