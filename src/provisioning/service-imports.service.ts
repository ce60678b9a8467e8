import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error';
import { isUniqueViolation } from '../common/errors/postgres-errors';
import { eachRowInSavepoint, type RowResult } from '../database/row-savepoints';
import type { Tx } from '../database/transaction-runner';
import { type Subscriber, SubscribersService } from '../subscribers';
import { ImportServiceDto } from './dto/service-import.dto';
import { CreateServiceDto, UpdateServiceDto } from './dto/service.dto';
import { ServicePlansRepository } from './service-plans.repository';
import { ServiceStatus } from './service-status';
import { ServicesRepository } from './services.repository';
import { ServicesService, writeError } from './services.service';

/** One validated row of a services import: its number in the file and its body (external_id present). */
export interface ServiceImportRow {
  row: number;
  dto: ImportServiceDto;
}

export type ServiceImportResult = RowResult<'created' | 'updated' | 'unchanged'>;

/** A refusal of the create and update code paths, named by the row's columns rather than the API's fields. */
function asRowError(error: ApiError): ApiError {
  const field =
    error.field === 'subscriber_id'
      ? 'subscriber_external_id'
      : error.field === 'status'
        ? 'external_id'
        : null;
  return field === null ? error : new ApiError(error.code, error.message, field);
}

/** Why a row fails the database's uniqueness (a login, an address, or an external_id another import took first). */
function rowWriteError(error: unknown): ApiError | null {
  if (isUniqueViolation(error, 'uq_services_external_id')) {
    return new ApiError(
      'validation_failed',
      'Another import created a service with this external_id at the same time; import the row again.',
      'external_id',
    );
  }
  return writeError(error);
}

/**
 * Imports of services: a batch of rows in the caller's transaction, each in its own savepoint, matched by the
 * service's external_id. A new one is created by ServicesService.createIn, the code path of POST
 * /subscribers/{id}/services (its activate order, its events, a prospect's move to pending); a known one is updated
 * by updateIn, PATCH /services/{id}'s (what PATCH may change: the password, the static address, the CPE's MAC, the
 * installation address; a network change gets its modify order), or left unchanged. Its subscriber, plan and login
 * are not changed by an import: a row that says otherwise is refused.
 */
@Injectable()
export class ServiceImportsService {
  constructor(
    private readonly services: ServicesService,
    private readonly repository: ServicesRepository,
    private readonly plans: ServicePlansRepository,
    private readonly subscribers: SubscribersService,
  ) {}

  async importBatch(
    tx: Tx,
    tenantId: string,
    rows: readonly ServiceImportRow[],
  ): Promise<ServiceImportResult[]> {
    const slug = await this.services.tenantSlug(tenantId, tx.manager);
    // Subscribers first (docs/decisions.md "One lock order"), in id order, then each row's service.
    const subscribers = new Map(
      (
        await this.subscribers.lockByExternalIds(tx.manager, tenantId, [
          ...new Set(rows.map(({ dto }) => dto.subscriber_external_id)),
        ])
      ).map((subscriber) => [subscriber.externalId!, subscriber]),
    );
    const names = rows.map(({ dto }) => dto.plan_name).filter((name) => name !== undefined);
    const plans = new Map(
      (names.length > 0 ? await this.plans.findByNames(tx.manager, tenantId, names) : []).map((plan) => [
        plan.name,
        plan.id,
      ]),
    );
    return eachRowInSavepoint(
      tx,
      'service_import_row',
      rows,
      ({ dto }) =>
        this.importRow(tx, tenantId, slug, dto, subscribers.get(dto.subscriber_external_id), plans),
      (error) => (error instanceof ApiError ? asRowError(error) : rowWriteError(error)),
    );
  }

  private async importRow(
    tx: Tx,
    tenantId: string,
    slug: string,
    dto: ImportServiceDto,
    subscriber: Subscriber | undefined,
    plans: ReadonlyMap<string, string>,
  ): Promise<'created' | 'updated' | 'unchanged'> {
    if (!subscriber) {
      throw new ApiError(
        'invalid_reference',
        `No subscriber has external_id ${dto.subscriber_external_id}: import the subscribers first.`,
        'subscriber_external_id',
      );
    }
    const plan = this.planOf(dto, plans);
    const current = await this.repository.lockByExternalId(tx.manager, tenantId, dto.external_id!);
    if (!current) {
      const create = Object.assign(new CreateServiceDto(), {
        plan_id: plan.id,
        pppoe_username: dto.pppoe_username,
        pppoe_password: dto.pppoe_password,
        static_ipv4: dto.static_ipv4,
        cpe_mac: dto.cpe_mac,
        installation_address: dto.installation_address,
      });
      await this.services.createIn(tx, tenantId, slug, subscriber.id, create, dto.external_id!);
      return 'created';
    }
    if (current.status === ServiceStatus.Terminated) {
      throw new ApiError(
        'invalid_state_transition',
        `Service ${current.id} (external_id ${dto.external_id}) is terminated and read-only.`,
        'external_id',
      );
    }
    if (current.subscriberId !== subscriber.id) {
      throw new ApiError(
        'validation_failed',
        `Service ${current.id} belongs to another subscriber; a service does not move between subscribers.`,
        'subscriber_external_id',
      );
    }
    if (current.planId !== plan.id) {
      throw new ApiError(
        'validation_failed',
        `Service ${current.id} is on plan ${current.planId}: a plan is changed by POST /services/{id}/actions (change_plan), not by an import.`,
        plan.field,
      );
    }
    if (current.pppoeUsername !== dto.pppoe_username) {
      throw new ApiError(
        'validation_failed',
        `Service ${current.id} has another PPPoE username, which is not changed once the service exists.`,
        'pppoe_username',
      );
    }
    const update = Object.assign(new UpdateServiceDto(), {
      pppoe_password: dto.pppoe_password,
      static_ipv4: dto.static_ipv4,
      cpe_mac: dto.cpe_mac,
      installation_address: dto.installation_address,
    });
    const { changed } = await this.services.updateIn(tx, current, update);
    return changed.length > 0 ? 'updated' : 'unchanged';
  }

  /** The row's plan: plan_id, or the plan named plan_name; exactly one of the two. */
  private planOf(dto: ImportServiceDto, plans: ReadonlyMap<string, string>): { id: string; field: string } {
    if (dto.plan_id !== undefined && dto.plan_name !== undefined) {
      throw new ApiError('validation_failed', 'Give plan_id or plan_name, not both.', 'plan_name');
    }
    if (dto.plan_id !== undefined) {
      return { id: dto.plan_id, field: 'plan_id' };
    }
    if (dto.plan_name === undefined) {
      throw new ApiError('missing_field', 'plan_id or plan_name is required.', 'plan_id');
    }
    const id = plans.get(dto.plan_name);
    if (id === undefined) {
      throw new ApiError('invalid_reference', `No service plan is named ${dto.plan_name}.`, 'plan_name');
    }
    return { id, field: 'plan_name' };
  }
}
