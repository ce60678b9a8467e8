import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookWorker } from './webhook-worker';
import { WebhookDeliveriesController, WebhooksController } from './webhooks.controller';
import { WebhooksOutboxModule } from './webhooks-outbox.module';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksPurge } from './webhooks-purge';
import { WebhooksService } from './webhooks.service';

/** Subscriptions, the outbox fan-out of every event, and the signed, retried delivery worker. */
@Module({
  imports: [EventsModule, WebhooksOutboxModule],
  controllers: [WebhooksController, WebhookDeliveriesController],
  providers: [WebhooksService, WebhookWorker, WebhooksRepository, WebhookDeliveriesRepository, WebhooksPurge],
  exports: [WebhooksService, WebhooksPurge],
})
export class WebhooksModule {}
