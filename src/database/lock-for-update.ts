import type { EntityManager, EntityTarget, FindOptionsWhere, ObjectLiteral } from 'typeorm';
import { ApiError } from '../common/errors/api-error';

/** The tenant's record with this id, row-locked until the transaction ends; 404 not_found names `resource`. */
export async function lockForUpdate<T extends ObjectLiteral & { tenantId: string; id: string }>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  tenantId: string,
  id: string,
  resource: string,
): Promise<T> {
  const where = { tenantId, id } as FindOptionsWhere<T>;
  const record = await manager.findOne(entity, { where, lock: { mode: 'pessimistic_write' } });
  if (!record) {
    throw ApiError.notFound(resource, id);
  }
  return record;
}
