import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { paginate, type PageQueryDto } from '../common/pagination';
import { lockForUpdate } from '../database/lock-for-update';
import { Webhook } from './webhook.entity';

/** The subscriptions (webhooks). */
@Injectable()
export class WebhooksRepository {
  async insert(manager: EntityManager, webhook: Webhook): Promise<void> {
    await manager.insert(Webhook, webhook);
  }

  /** The tenant's subscription; 404 not_found when there is none. */
  async getById(manager: EntityManager, tenantId: string, id: string): Promise<Webhook> {
    const webhook = await manager.findOneBy(Webhook, { tenantId, id });
    if (!webhook) {
      throw ApiError.notFound('webhook', id);
    }
    return webhook;
  }

  /** The tenant's subscription, row-locked until the transaction ends; 404 not_found when there is none. */
  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<Webhook> {
    return lockForUpdate(manager, Webhook, tenantId, id, 'webhook');
  }

  async update(manager: EntityManager, webhook: Webhook): Promise<void> {
    await manager.save(Webhook, webhook);
  }

  async delete(manager: EntityManager, tenantId: string, id: string): Promise<void> {
    await manager.delete(Webhook, { tenantId, id });
  }

  page(manager: EntityManager, tenantId: string, query: PageQueryDto): Promise<Page<Webhook>> {
    const qb = manager
      .getRepository(Webhook)
      .createQueryBuilder('webhook')
      .where('webhook.tenantId = :tenantId', { tenantId });
    return paginate(qb, query);
  }

  /** The subscription of a delivery the worker claimed, or null (deleted meanwhile). */
  findForDelivery(manager: EntityManager, id: string): Promise<Webhook | null> {
    return manager.findOneBy(Webhook, { id });
  }

  /**
   * Whether the subscription is enabled, its row locked against a PATCH that disables it (which cancels what is
   * pending) until the transaction ends; undefined when it was deleted.
   */
  async lockEnabled(manager: EntityManager, id: string): Promise<boolean | undefined> {
    const [row] = await manager.query<{ enabled: boolean }[]>(
      'SELECT enabled FROM webhooks WHERE id = $1 FOR NO KEY UPDATE',
      [id],
    );
    return row?.enabled;
  }

  /** A delivery went through: the subscription is no longer failing. */
  async clearFailing(manager: EntityManager, id: string): Promise<void> {
    await manager.query(
      'UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL',
      [id],
    );
  }

  /** A delivery failed: failing since now() unless already; answers whether it has been failing `forS` seconds. */
  async markFailing(manager: EntityManager, id: string, forS: number): Promise<boolean> {
    const [failing] = await manager.query<[{ too_long: boolean }[], number]>(
      `UPDATE webhooks SET failing_since = COALESCE(failing_since, now()) WHERE id = $1
       RETURNING failing_since <= now() - $2::float8 * interval '1 second' AS too_long`,
      [id, forS],
    );
    return failing[0]?.too_long ?? false;
  }

  /** Disabled by the worker (a 410, or failing too long), with the reason shown to the tenant. */
  async disable(manager: EntityManager, id: string, reason: string): Promise<void> {
    await manager.query(
      'UPDATE webhooks SET enabled = false, disabled_reason = $2, updated_at = now() WHERE id = $1',
      [id, reason],
    );
  }

  /** Deletes every webhooks row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM webhooks WHERE tenant_id = $1', [tenantId]);
  }
}
