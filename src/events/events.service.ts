import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import type { RenderedPage } from '../common/envelope/envelope';
import type { SqlParams } from '../database/sql-params';
import type { Tx } from '../database/transaction-runner';
import { ListEventsQueryDto } from './dto/list-events-query.dto';
import { EventRecord } from './event.entity';
import { EventsRepository, type OutboxFanOut } from './events.repository';
import { eventRecord, type NewEvent } from './new-event';

export type { NewEvent } from './new-event';

/** Called once a transaction that queued webhook deliveries has committed. */
export type DeliveriesQueuedListener = () => void;

@Injectable()
export class EventsService {
  private readonly deliveriesQueued: DeliveriesQueuedListener[] = [];

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: EventsRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Registers what every event queues in its own statement (the outbox): webhooks supplies its deliveries, so events
   * never names another module's table. Without one (the CLI without webhooks) an event is written alone.
   */
  useFanOut(fanOut: OutboxFanOut): void {
    this.events.useFanOut(fanOut);
  }

  /** Registers a listener told when a transaction that queued webhook deliveries commits (the worker wakes). */
  onDeliveriesQueued(listener: DeliveriesQueuedListener): void {
    this.deliveriesQueued.push(listener);
  }

  /**
   * Appends an event through the caller's transaction, so it commits or rolls back with the change, and queues its
   * webhook deliveries in the same statement (the outbox, see eventCtes). `fanOut: false` queues none (a webhook test
   * ping goes to one endpoint only).
   */
  async append(tx: Tx, event: NewEvent, options: { fanOut?: boolean } = {}): Promise<EventRecord> {
    const record = eventRecord(event, tx.scope, this.clock.now());
    const deliveries = await this.events.append(tx.manager, record, options.fanOut !== false);
    this.queued(tx, deliveries);
    return record;
  }

  /** Appends many events in the caller's transaction with one statement (a bill run's batch), fan-out included. */
  async appendMany(tx: Tx, events: NewEvent[]): Promise<EventRecord[]> {
    const records = events.map((event) => eventRecord(event, tx.scope, this.clock.now()));
    this.queued(tx, await this.events.appendMany(tx.manager, records));
    return records;
  }

  /**
   * appendMany with the caller's own writes in the same statement (EventsRepository.manyStatement): `callerCtes` and
   * their parameters in `params`, the events after them; one round trip in the caller's transaction.
   */
  async appendManyWith(
    tx: Tx,
    events: NewEvent[],
    params: SqlParams,
    callerCtes: readonly string[],
  ): Promise<EventRecord[]> {
    const records = events.map((event) => eventRecord(event, tx.scope, this.clock.now()));
    const statement = this.events.manyStatement(params, records, callerCtes);
    this.queued(tx, await this.events.writeMany(tx.manager, statement, params));
    return records;
  }

  /** When `deliveries` (the count an event statement selected, EventsRepository.statement) is more than zero, tells the listeners on commit. */
  queued(tx: Tx, deliveries: number): void {
    if (deliveries > 0) {
      for (const listener of this.deliveriesQueued) {
        tx.afterCommit(listener);
      }
    }
  }

  /**
   * Deletes a test tenant's events (its test clock is deleted, docs/test-clocks.md: its log goes with it, as Stripe's
   * test objects do), once the deliveries and notifications that name them are gone.
   */
  purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    return this.events.purgeTenant(tx.manager, tenantId);
  }

  list(tenantId: string, query: ListEventsQueryDto): Promise<RenderedPage> {
    return this.events.page(this.dataSource.manager, tenantId, query);
  }

  getById(tenantId: string, id: string): Promise<EventRecord> {
    return this.events.getById(this.dataSource.manager, tenantId, id);
  }

  /** The event, or null (a delivery's event, read by the webhook worker). */
  find(tenantId: string, id: string): Promise<EventRecord | null> {
    return this.events.findById(this.dataSource.manager, tenantId, id);
  }
}
