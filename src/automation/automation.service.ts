import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { ApiError } from '../common/errors/api-error';
import type { AuthContext } from '../common/request-context';
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import { AutomationRepository } from './automation.repository';
import { AutomationRuleDto, UpdateAutomationRuleDto } from './dto/automation-rule.dto';
import { isRuleId, RULES, type RuleId } from './rules';

/** The rules as the API shows them, and their per-tenant switch. */
@Injectable()
export class AutomationService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly automation: AutomationRepository,
    private readonly clock: Clock,
  ) {}

  async list(tenantId: string): Promise<AutomationRuleDto[]> {
    const settings = await this.automation.settings(this.dataSource.manager, tenantId);
    const off = new Set(settings.filter((setting) => !setting.enabled).map((setting) => setting.rule));
    return RULES.map((rule) => AutomationRuleDto.from(rule, !off.has(rule.id)));
  }

  update(auth: AuthContext, id: string, dto: UpdateAutomationRuleDto): Promise<AutomationRuleDto> {
    if (!isRuleId(id)) {
      throw ApiError.notFound('automation rule', id);
    }
    const rule = RULES.find((each) => each.id === id)!;
    return this.transactionRunner.run(auth, async (tx) => {
      const was = await this.automation.setEnabled(
        tx.manager,
        auth.tenantId,
        id,
        dto.enabled,
        this.clock.now(),
      );
      const answer = AutomationRuleDto.from(rule, dto.enabled);
      if (was !== dto.enabled) {
        await this.events.append(tx, {
          tenantId: auth.tenantId,
          type: 'automation_rule.updated',
          subjectId: id,
          object: answer,
          details: { changed_fields: ['enabled'] },
        });
      }
      return answer;
    });
  }

  /** Whether `rule` acts for the tenant (read in the caller's transaction). */
  async isEnabled(manager: EntityManager, tenantId: string, rule: RuleId): Promise<boolean> {
    return !(await this.automation.disabled(manager, [tenantId])).has(`${tenantId}/${rule}`);
  }
}
