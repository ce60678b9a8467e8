// The notifications module's public surface: other modules import notifications only from here (docs/architecture.md).
export { NotificationsOutboxModule } from './outbox/notifications-outbox';
export { NotificationsPurge } from './notifications-purge';
export { NotificationsModule } from './notifications.module';
