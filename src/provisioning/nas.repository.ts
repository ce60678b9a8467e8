import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { paginate, type PageQueryDto } from '../common/pagination';
import { lockForUpdate } from '../database/lock-for-update';
import { NasDevice } from './provisioning.entity';

/** The only place the nas_devices table (the API's NAS registry) is read and written. */
@Injectable()
export class NasRepository {
  async insert(manager: EntityManager, nas: NasDevice): Promise<void> {
    await manager.insert(NasDevice, nas);
  }

  findById(manager: EntityManager, tenantId: string, id: string): Promise<NasDevice | null> {
    return manager.findOne(NasDevice, { where: { tenantId, id } });
  }

  /** The tenant's NAS at this address: where a session of one of its services runs. */
  findByIp(manager: EntityManager, tenantId: string, ip: string): Promise<NasDevice | null> {
    return manager.findOne(NasDevice, { where: { tenantId, ip } });
  }

  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<NasDevice> {
    return lockForUpdate(manager, NasDevice, tenantId, id, 'NAS');
  }

  async update(manager: EntityManager, nas: NasDevice): Promise<void> {
    const changes: Partial<NasDevice> = { ...nas };
    for (const fixed of ['tenantId', 'id', 'createdAt'] as const) {
      delete changes[fixed];
    }
    await manager.update(NasDevice, { tenantId: nas.tenantId, id: nas.id }, changes);
  }

  async delete(manager: EntityManager, tenantId: string, id: string): Promise<void> {
    await manager.delete(NasDevice, { tenantId, id });
  }

  /** Deletes the tenant's NAS registry (its test clock is deleted) and answers the addresses it held. */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<string[]> {
    const [rows] = await manager.query<[{ ip: string }[], number]>(
      'DELETE FROM nas_devices WHERE tenant_id = $1 RETURNING ip',
      [tenantId],
    );
    return rows.map((row) => row.ip);
  }

  page(manager: EntityManager, tenantId: string, query: PageQueryDto): Promise<Page<NasDevice>> {
    const qb = manager
      .getRepository(NasDevice)
      .createQueryBuilder('nas')
      .where('nas.tenantId = :tenantId', { tenantId });
    return paginate(qb, query);
  }
}
