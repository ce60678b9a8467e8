import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, IsDefined } from 'class-validator';
import { RULE_IDS, RULES, type RuleId } from '../rules';

@ApiSchema({ description: 'Whether the rule runs for the tenant.' })
export class UpdateAutomationRuleDto {
  @ApiProperty({ example: false, description: 'Whether the rule acts for this tenant.' })
  @IsDefined({ message: 'enabled is required' })
  @IsBoolean()
  enabled: boolean;
}

@ApiSchema({
  description:
    'A rule the service runs on events (dunning, services following their subscriber), and whether the tenant has it on.',
})
export class AutomationRuleDto {
  @ApiProperty({
    enum: RULE_IDS,
    example: 'overdue_invoices',
    description: 'The rule; docs/automation.md describes each.',
  })
  id: RuleId;
  @ApiProperty({ example: 'Overdue invoices and suspension for non-payment' }) name: string;
  @ApiProperty({ example: 'A sweep: an open invoice past its due date gets invoice.overdue, once; …' })
  description: string;
  @ApiProperty({
    type: [String],
    example: ['subscriber.status_changed'],
    description:
      'The event types it reacts to (schedule: a periodic sweep; billing_run: applied by bill runs).',
  })
  triggers: string[];
  @ApiProperty({
    type: [String],
    example: ['provisioning_order.created'],
    description: 'The events its actions write.',
  })
  emits: string[];
  @ApiProperty({
    example: true,
    description: 'Whether the rule acts for this tenant (PATCH turns it off or on).',
  })
  enabled: boolean;

  static from(rule: (typeof RULES)[number], enabled: boolean): AutomationRuleDto {
    return {
      id: rule.id,
      name: rule.name,
      description: rule.description,
      triggers: [...rule.triggers],
      emits: [...rule.emits],
      enabled,
    };
  }
}
