import { Module } from '@nestjs/common';
import { BillingModule } from '../billing';
import { EventsModule } from '../events';
import { TenancyModule } from '../gateway';
import { ProvisioningModule } from '../provisioning';
import { SubscribersModule } from '../subscribers';
import { TicketsModule } from '../tickets';
import { NotificationPreferencesController } from './api/notification-preferences.controller';
import { NotificationPreferencesService } from './api/notification-preferences.service';
import { NotificationTemplatesController } from './api/notification-templates.controller';
import { NotificationTemplatesService } from './api/notification-templates.service';
import { NotificationsController } from './api/notifications.controller';
import { NotificationsService } from './api/notifications.service';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { MailSender } from './mail/mail-sender';

/** How long one send may take: 120 s, or less when the lease is shorter (a tenth of it kept for recording). */
export function sendBound(leaseMs: number): number {
  return Math.min(120_000, Math.floor(leaseMs * 0.9));
}
import { NotificationSettingsRepository } from './notification-settings.repository';
import { NotificationsRepository } from './notifications.repository';
import { NotificationsPurge } from './notifications-purge';
import { NotificationsOutboxModule } from './outbox/notifications-outbox';
import { NotificationContent } from './sending/notification-content';
import { NotificationWorker } from './sending/notification-worker';

/**
 * Mail to subscribers (issue 31): the outbox fan-out that queues a notification in the statement of the event that
 * causes it, the worker that sends them over SMTP, their list, the tenant's templates and the subscribers'
 * preferences.
 */
@Module({
  imports: [
    EventsModule,
    NotificationsOutboxModule,
    TenancyModule,
    BillingModule,
    SubscribersModule,
    ProvisioningModule,
    TicketsModule,
  ],
  controllers: [NotificationsController, NotificationPreferencesController, NotificationTemplatesController],
  providers: [
    {
      provide: MailSender,
      // A send ends (as a temporary failure) before its lease does, so no other instance takes over a send under way.
      useFactory: (config: AppConfig) =>
        new MailSender({ sendTimeoutMs: sendBound(config.notifications.leaseMs) }),
      inject: [APP_CONFIG],
    },
    NotificationsRepository,
    NotificationSettingsRepository,
    NotificationContent,
    NotificationWorker,
    NotificationsService,
    NotificationPreferencesService,
    NotificationTemplatesService,
    NotificationsPurge,
  ],
  exports: [NotificationsPurge],
})
export class NotificationsModule {}
