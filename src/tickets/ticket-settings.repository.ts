import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { TicketSettings } from './ticket.entity';

/** The only place the ticket_settings table is read and written. */
@Injectable()
export class TicketSettingsRepository {
  /** The tenant's settings row, or null while the defaults apply. */
  find(manager: EntityManager, tenantId: string): Promise<TicketSettings | null> {
    return manager.findOne(TicketSettings, { where: { tenantId } });
  }

  /**
   * The tenant's row, locked until commit, made from `initial` first when there is none: concurrent PATCHes, the
   * first ones included, merge one after the other.
   */
  async lock(manager: EntityManager, initial: TicketSettings): Promise<TicketSettings> {
    await manager.createQueryBuilder().insert().into(TicketSettings).values(initial).orIgnore().execute();
    return manager.findOneOrFail(TicketSettings, {
      where: { tenantId: initial.tenantId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  async update(manager: EntityManager, settings: TicketSettings): Promise<void> {
    const { tenantId, ...changes } = settings;
    await manager.update(TicketSettings, { tenantId }, changes);
  }

  /** Deletes every ticket_settings row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM ticket_settings WHERE tenant_id = $1', [tenantId]);
  }
}
