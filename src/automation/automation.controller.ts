import { Body, Controller, Get, HttpCode, Param, Patch } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import type { AuthContext } from '../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS, BODY_ERRORS } from '../common/swagger/api-envelope';
import { ApiExampleBody } from '../common/swagger/api-types';
import { AutomationService } from './automation.service';
import { AutomationRuleDto, UpdateAutomationRuleDto } from './dto/automation-rule.dto';

@ApiTags('Automation')
@ApiBearerAuth()
@Controller('api/v1/automation/rules')
export class AutomationController {
  constructor(private readonly automation: AutomationService) {}

  @Get()
  @RequireScopes('automation:read')
  @ApiOperation({
    description:
      'Lists every automation rule the service knows (dunning, services following their subscriber, …) with the events that trigger it, the events it emits, and whether it is enabled for the tenant. The list is short and complete, so it is not paginated.',
    summary: 'List the automation rules, what each does and whether it is enabled for the tenant',
  })
  @ApiEnvelope(AutomationRuleDto, { list: 'whole' })
  @ApiErrors(...AUTH_ERRORS)
  async listAutomationRules(@Auth() auth: AuthContext): Promise<AutomationRuleDto[]> {
    return this.automation.list(auth.tenantId);
  }

  @Patch(':rule')
  @HttpCode(200)
  @RequireScopes('automation:write')
  @ApiOperation({
    description:
      'Enables or disables one automation rule for the tenant; the change applies to events processed from then on. Emits `automation_rule.updated`; 404 `not_found` for an unknown rule name.',
    summary: 'Enable or disable an automation rule for the tenant',
  })
  @ApiEnvelope(AutomationRuleDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found')
  @ApiExampleBody(UpdateAutomationRuleDto, { enabled: false })
  async updateAutomationRule(
    @Auth() auth: AuthContext,
    @Param('rule') rule: string,
    @Body() dto: UpdateAutomationRuleDto,
  ): Promise<AutomationRuleDto> {
    return this.automation.update(auth, rule, dto);
  }
}
