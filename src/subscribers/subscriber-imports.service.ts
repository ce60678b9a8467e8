import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { ApiError } from '../common/errors/api-error';
import type { Tx } from '../database/transaction-runner';
import { EventsService, type NewEvent } from '../events';
import { CreateSubscriberDto } from './dto/create-subscriber.dto';
import { SubscriberDto } from './dto/subscriber-response.dto';
import { UpdateSubscriberDto } from './dto/update-subscriber.dto';
import { applyChanges, newSubscriber, normalizeEmail, writeError } from './subscriber-records';
import { SubscriberStatus } from './subscriber-status';
import { Subscriber } from './subscriber.entity';
import { SubscribersRepository } from './subscribers.repository';

/** One validated row of an import: its number in the file and its create body (external_id present). */
export interface SubscriberImportRow {
  row: number;
  dto: CreateSubscriberDto;
}

export type SubscriberImportOutcome = 'created' | 'updated' | 'unchanged';

export type SubscriberImportResult =
  { row: number; outcome: SubscriberImportOutcome } | { row: number; error: ApiError };

/** The fields of a create body an existing subscriber takes from an imported row (status moves go through /status). */
const UPDATABLE = [
  'full_name',
  'email',
  'phone',
  'billing_profile_id',
  'address',
  'metadata',
  'tax_exempt',
  'tax_exempt_reason',
  'tax_id',
] as const satisfies readonly (keyof CreateSubscriberDto & keyof UpdateSubscriberDto)[];

function asUpdate(dto: CreateSubscriberDto): UpdateSubscriberDto {
  return Object.assign(
    new UpdateSubscriberDto(),
    Object.fromEntries(UPDATABLE.map((field) => [field, dto[field]])),
  );
}

/**
 * Imports: a batch of rows, idempotent by external_id, in the caller's transaction. A row whose external_id the
 * tenant has updates that subscriber (or leaves it unchanged) as PATCH would; any other creates one as POST would,
 * with the same events. The batch is a few statements (its subscribers locked, one INSERT, one event statement);
 * when one row breaks them (a billing profile that is not the tenant's), the batch is done again row by row, each in
 * its own savepoint, so only that row is refused.
 */
@Injectable()
export class SubscriberImportsService {
  constructor(
    private readonly events: EventsService,
    private readonly subscribers: SubscribersRepository,
    private readonly clock: Clock,
  ) {}

  async importBatch(
    tx: Tx,
    tenantId: string,
    rows: readonly SubscriberImportRow[],
  ): Promise<SubscriberImportResult[]> {
    try {
      return await tx.savepoint('subscriber_import', () => this.write(tx, tenantId, rows));
    } catch (error) {
      if (!writeError(error)) {
        throw error;
      }
    }
    const results: SubscriberImportResult[] = [];
    for (const row of rows) {
      try {
        results.push(...(await tx.savepoint('subscriber_import_row', () => this.write(tx, tenantId, [row]))));
      } catch (error) {
        const refused = writeError(error, row.dto.billing_profile_id);
        if (!refused) {
          throw error;
        }
        results.push({ row: row.row, error: refused });
      }
    }
    return results;
  }

  private async write(
    tx: Tx,
    tenantId: string,
    rows: readonly SubscriberImportRow[],
  ): Promise<SubscriberImportResult[]> {
    const externalIds = [...new Set(rows.map(({ dto }) => dto.external_id!))];
    const emails = [...new Set(rows.map(({ dto }) => normalizeEmail(dto.email)).filter((e) => e !== null))];
    const batch = new ImportBatch(
      tenantId,
      this.clock.now(),
      await this.subscribers.lockByExternalIds(tx.manager, tenantId, externalIds),
      await this.subscribers.liveEmailOwners(tx.manager, tenantId, emails),
    );
    const results = rows.map((row) => batch.apply(row));
    await this.subscribers.insertMany(tx.manager, [...batch.inserted.values()]);
    for (const subscriber of batch.updated.values()) {
      await this.subscribers.update(tx.manager, subscriber);
    }
    await this.events.appendMany(tx, batch.events);
    return results;
  }
}

/**
 * A batch's rows applied in order, in memory: the subscribers they create or change (a row may change one an earlier
 * row of the batch created), their events, and the live emails taken, so a duplicate within the batch is refused as
 * the database would refuse it.
 */
class ImportBatch {
  readonly inserted = new Map<string, Subscriber>();
  readonly updated = new Map<string, Subscriber>();
  readonly events: NewEvent[] = [];
  private readonly known = new Map<string, Subscriber>();
  private readonly emailOwners = new Map<string, string>();

  constructor(
    private readonly tenantId: string,
    private readonly now: Date,
    existing: readonly Subscriber[],
    owners: readonly { email: string; id: string }[],
  ) {
    for (const subscriber of existing) {
      this.known.set(subscriber.externalId!, subscriber);
    }
    for (const { email, id } of owners) {
      this.emailOwners.set(email, id);
    }
  }

  apply({ row, dto }: SubscriberImportRow): SubscriberImportResult {
    try {
      const current = this.known.get(dto.external_id!);
      return { row, outcome: current ? this.change(current, dto) : this.create(dto) };
    } catch (error) {
      if (!(error instanceof ApiError)) {
        throw error;
      }
      return { row, error };
    }
  }

  private create(dto: CreateSubscriberDto): SubscriberImportOutcome {
    const subscriber = newSubscriber(this.tenantId, dto, this.now);
    this.claimEmail(subscriber, null);
    this.known.set(dto.external_id!, subscriber);
    this.inserted.set(subscriber.id, subscriber);
    this.events.push({
      tenantId: this.tenantId,
      type: 'subscriber.created',
      subjectId: subscriber.id,
      object: SubscriberDto.from(subscriber),
    });
    return 'created';
  }

  private change(current: Subscriber, dto: CreateSubscriberDto): SubscriberImportOutcome {
    if (current.status === SubscriberStatus.Archived) {
      throw new ApiError('invalid_state_transition', 'An archived subscriber is read-only.', 'external_id');
    }
    const next = Object.assign(new Subscriber(), current);
    const changed = applyChanges(next, asUpdate(dto));
    if (changed.length === 0) {
      return 'unchanged';
    }
    this.claimEmail(next, current.emailNormalized);
    next.updatedAt = this.now;
    this.known.set(dto.external_id!, next);
    (this.inserted.has(next.id) ? this.inserted : this.updated).set(next.id, next);
    this.events.push({
      tenantId: this.tenantId,
      type: 'subscriber.updated',
      subjectId: next.id,
      object: SubscriberDto.from(next),
      details: { changed_fields: changed },
    });
    return 'updated';
  }

  /** uq_subscribers_email, checked before the write: one live subscriber per email, within the batch too. */
  private claimEmail(subscriber: Subscriber, previous: string | null): void {
    const email = subscriber.emailNormalized;
    const owner = email === null ? undefined : this.emailOwners.get(email);
    if (email !== null && owner !== undefined && owner !== subscriber.id) {
      throw new ApiError(
        'duplicate_subscriber',
        'A subscriber with the supplied email already exists.',
        'email',
      );
    }
    if (previous !== null && previous !== email && this.emailOwners.get(previous) === subscriber.id) {
      this.emailOwners.delete(previous);
    }
    if (email !== null) {
      this.emailOwners.set(email, subscriber.id);
    }
  }
}
