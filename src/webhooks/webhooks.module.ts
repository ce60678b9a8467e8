import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { WebhookWorker } from './webhook-worker';
import { WebhookDeliveriesController, WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Subscriptions, the outbox fan-out of every event, and the signed, retried delivery worker. */
@Module({
  imports: [EventsModule],
  controllers: [WebhooksController, WebhookDeliveriesController],
  providers: [WebhooksService, WebhookWorker],
  exports: [WebhooksService],
})
export class WebhooksModule {}
