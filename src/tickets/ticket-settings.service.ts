import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import type { AuthContext } from '../common/request-context';
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import {
  DEFAULT_DUE_HOURS,
  type DueHours,
  TicketSettingsDto,
  UpdateTicketSettingsDto,
} from './dto/ticket-settings.dto';
import { TicketSettingsRepository } from './ticket-settings.repository';
import { TicketPriority, TICKET_PRIORITIES } from './ticket-status';
import { TicketSettings } from './ticket.entity';

const HOUR_MS = 3_600_000;

/** The tenant's hours per priority: its own, or the defaults when it never changed them. */
export function dueHoursOf(settings: TicketSettings | null): DueHours {
  if (!settings) {
    return { ...DEFAULT_DUE_HOURS };
  }
  return {
    urgent: settings.urgentHours,
    high: settings.highHours,
    normal: settings.normalHours,
    low: settings.lowHours,
  };
}

/** A ticket's due time: `createdAt` plus the hours its priority has under these settings. */
export function slaDueAt(settings: TicketSettings | null, priority: TicketPriority, createdAt: Date): Date {
  return new Date(createdAt.getTime() + dueHoursOf(settings)[priority] * HOUR_MS);
}

function answer(settings: TicketSettings | null): TicketSettingsDto {
  return { due_hours: dueHoursOf(settings), updated_at: settings ? settings.updatedAt.toISOString() : null };
}

/** The tenant's SLA: how long the help desk has per priority. */
@Injectable()
export class TicketSettingsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly settings: TicketSettingsRepository,
    private readonly clock: Clock,
  ) {}

  async get(tenantId: string): Promise<TicketSettingsDto> {
    return answer(await this.settings.find(this.dataSource.manager, tenantId));
  }

  /** A ticket's due time: its creation plus the hours its priority has under the tenant's current SLA. */
  async dueAt(
    manager: EntityManager,
    tenantId: string,
    priority: TicketPriority,
    createdAt: Date,
  ): Promise<Date> {
    return slaDueAt(await this.settings.find(manager, tenantId), priority, createdAt);
  }

  /** Merges the priorities sent into the stored hours; tickets created afterwards, or re-prioritised, use them. */
  update(auth: AuthContext, dto: UpdateTicketSettingsDto): Promise<TicketSettingsDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const initial = Object.assign(new TicketSettings(), {
        tenantId,
        urgentHours: DEFAULT_DUE_HOURS.urgent,
        highHours: DEFAULT_DUE_HOURS.high,
        normalHours: DEFAULT_DUE_HOURS.normal,
        lowHours: DEFAULT_DUE_HOURS.low,
        updatedAt: this.clock.now(),
      });
      const settings = await this.settings.lock(tx.manager, initial);
      const before = dueHoursOf(settings);
      const sent = dto.due_hours ?? {};
      const changed = TICKET_PRIORITIES.filter(
        (priority) => sent[priority] !== undefined && sent[priority] !== before[priority],
      );
      if (changed.length === 0) {
        return answer(settings);
      }
      for (const priority of changed) {
        settings[`${priority}Hours`] = sent[priority] as number;
      }
      settings.updatedAt = this.clock.now();
      await this.settings.update(tx.manager, settings);
      const result = answer(settings);
      await this.events.append(tx, {
        tenantId,
        type: 'ticket_settings.updated',
        subjectId: null,
        object: result,
        details: { changed_fields: changed.map((priority) => `due_hours.${priority}`) },
      });
      return result;
    });
  }
}
