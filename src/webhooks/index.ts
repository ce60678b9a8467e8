// The webhooks module's public surface: other modules import webhooks only from here (docs/architecture.md).
export { DeliveryStatus, Webhook, WebhookAttempt, WebhookDelivery } from './webhook.entity';
export { WebhooksService } from './webhooks.service';
export { WebhooksPurge } from './webhooks-purge';
export { WebhooksModule } from './webhooks.module';
export { WebhooksOutboxModule } from './webhooks-outbox.module';
