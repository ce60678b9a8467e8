import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { NetworkSettings } from './network-settings.entity';

/** The only place the network_settings table is read and written. */
@Injectable()
export class NetworkSettingsRepository {
  /** The tenant's settings row, or null while the defaults apply. */
  find(manager: EntityManager, tenantId: string): Promise<NetworkSettings | null> {
    return manager.findOne(NetworkSettings, { where: { tenantId } });
  }

  /**
   * The tenant's row, locked until commit, made from `initial` (the defaults) first when there is none: concurrent
   * PATCHes, the first ones included, merge one after the other.
   */
  async lock(manager: EntityManager, initial: NetworkSettings): Promise<NetworkSettings> {
    await manager.createQueryBuilder().insert().into(NetworkSettings).values(initial).orIgnore().execute();
    return manager.findOneOrFail(NetworkSettings, {
      where: { tenantId: initial.tenantId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  async update(manager: EntityManager, settings: NetworkSettings): Promise<void> {
    const { tenantId, ...changes } = settings;
    await manager.update(NetworkSettings, { tenantId }, changes);
  }

  /**
   * Up to `limit` tenants whose settings changed since the network last received them, claimed until `leaseMs` from
   * now (the database's clock) with FOR UPDATE SKIP LOCKED: instances share them and never carry out one twice at once;
   * a worker that died leaves its claim to the next once the lease ends.
   */
  async claimPending(manager: EntityManager, leaseMs: number, limit: number): Promise<NetworkSettings[]> {
    // TypeORM answers an UPDATE … RETURNING with [rows, affected].
    const [rows] = await manager.query<[{ tenant_id: string }[], number]>(
      `UPDATE network_settings SET lease_until = now() + $1::float8 * interval '1 millisecond'
        WHERE tenant_id IN (
          SELECT tenant_id FROM network_settings
           WHERE version > applied_version AND (lease_until IS NULL OR lease_until < now())
           ORDER BY tenant_id LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING tenant_id`,
      [leaseMs, limit],
    );
    const ids = rows.map((row) => row.tenant_id);
    if (ids.length === 0) {
      return [];
    }
    return manager
      .getRepository(NetworkSettings)
      .createQueryBuilder('s')
      .where('s.tenantId = ANY(:ids)', { ids })
      .orderBy('s.tenantId')
      .getMany();
  }

  /** Records that the network has `version` of the tenant's settings (a later change stays pending). */
  async markApplied(manager: EntityManager, tenantId: string, version: number, at: Date): Promise<void> {
    await manager.query(
      `UPDATE network_settings SET applied_version = greatest(applied_version, $2), applied_at = $3, lease_until = NULL
        WHERE tenant_id = $1`,
      [tenantId, version, at],
    );
  }

  /** A failed attempt: the change is taken up again `delayMs` from now (the database's clock). */
  async retryLater(manager: EntityManager, tenantId: string, delayMs: number): Promise<void> {
    await manager.query(
      `UPDATE network_settings SET lease_until = now() + $2::float8 * interval '1 millisecond' WHERE tenant_id = $1`,
      [tenantId, delayMs],
    );
  }

  /** Deletes the tenant's network_settings row: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM network_settings WHERE tenant_id = $1', [tenantId]);
  }
}
