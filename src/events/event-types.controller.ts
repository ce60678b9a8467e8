import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../common/swagger/api-envelope';
import { RequireScopes } from '../common/auth/auth.decorators';
import { EventTypeDto } from './dto/event-type.dto';

@ApiTags('Events')
@ApiBearerAuth()
@Controller('api/v1/event-types')
export class EventTypesController {
  @Get()
  // The catalogue is what a webhook may subscribe to, so the scope that reads webhooks reads it.
  @RequireScopes('webhooks:read')
  @ApiOperation({
    summary: 'List every event type the service emits',
    description:
      'Scope `webhooks:read`. Webhook `events` accept these types, `prefix.*` of their prefixes (`subscriber.*`), ' +
      'or `*`. Not paginated.',
  })
  @ApiEnvelope(EventTypeDto, { list: 'whole' })
  @ApiErrors(...AUTH_ERRORS)
  listEventTypes(): EventTypeDto[] {
    return EventTypeDto.all();
  }
}
