import type { EntityManager } from 'typeorm';

/**
 * Ends the pending deliveries of a subscription just disabled (by request, a 410, or failing too long): they become
 * `cancelled` and leave the claim index, so a disabled endpoint costs the worker nothing. A delivery a worker holds
 * right now is left to that worker, which records it as cancelled once it sees the subscription disabled.
 * Re-enabling does not bring them back; a redelivery sends one again (WebhooksService.redeliver).
 */
export async function cancelPendingDeliveries(
  manager: EntityManager,
  tenantId: string,
  webhookId: string,
): Promise<void> {
  await manager.query(
    `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = now()
     WHERE tenant_id = $1 AND webhook_id = $2 AND status = 'pending'
       AND (locked_until IS NULL OR locked_until < now())`,
    [tenantId, webhookId],
  );
}
