// The subscribers domain's public surface: other modules import subscribers only from here (docs/architecture.md).
// Entities first: a domain whose entity references Subscriber may be loaded while this file is still loading.
export { Subscriber } from './subscriber.entity';
export type { PostalAddress } from './subscriber.entity';
export {
  SubscriberStatus,
  SuspensionReason,
  SUBSCRIBER_STATUSES,
  CREATABLE_STATUSES,
  SUSPENSION_REASONS,
} from './subscriber-status';
export { CreateSubscriberDto } from './dto/create-subscriber.dto';
export { UpdateSubscriberDto } from './dto/update-subscriber.dto';
export { ChangeStatusDto } from './dto/change-status.dto';
export { ListSubscribersQueryDto } from './dto/list-subscribers-query.dto';
export { CreatedSubscriberDto, SubscriberDto } from './dto/subscriber-response.dto';
export { SubscribersService } from './subscribers.service';
export { SubscriberImportsService } from './subscriber-imports.service';
export { SubscribersPurge } from './subscribers-purge';
export type {
  SubscriberImportOutcome,
  SubscriberImportResult,
  SubscriberImportRow,
} from './subscriber-imports.service';
export { subscribersTable } from './subscribers.repository';
export type { SearchPlaceholders, SubscriberSearchSource } from './subscriber-search.repository';
export { SUBSCRIBER_FOLLOWS_SERVICE } from './subscriber-rules';
export type { OutstandingBalancePolicy } from './subscriber-rules';
export { SubscribersModule } from './subscribers.module';
