import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { Clock } from '../../common/clock';
import { ApiError } from '../../common/errors/api-error';
import { assertIfMatch } from '../../common/http/etag';
import { newId } from '../../common/ids';
import { MAX_AMOUNT } from '../../common/money';
import type { AuthContext } from '../../common/request-context';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { ServicesService } from '../../provisioning';
import { SubscribersService } from '../../subscribers';
import { InvoicesService } from '../invoices/invoices.service';
import { BillingProfilesService } from '../profiles/billing-profiles.service';
import { TaxRatesService } from '../taxes/tax-rates.service';
import { Charge, ChargeSource, ChargeStatus } from './charge.entity';
import { ChargesRepository } from './charges.repository';
import { ChargeDto, CreateChargeDto, ListChargesQueryDto } from './dto/charge.dto';

/** What a charge records besides its amount (the API's form, a debit's, a fee's). */
export interface NewCharge {
  tenantId: string;
  subscriberId: string;
  serviceId: string | null;
  description: string;
  unitAmount: number;
  quantity: number;
  currency: string;
  source: ChargeSource;
  sourceId: string | null;
  /** The rates its line is taxed at (checked by the caller); absent or null: the billing profile's. */
  taxRateIds?: string[] | null;
}

/**
 * Pending invoice items (docs/billing.md, "Charges"): recorded under the subscriber's row lock (the lock a bill run
 * batch takes its subscribers with), so a charge lands on exactly one invoice, and a deleted one on none.
 */
@Injectable()
export class ChargesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly subscribers: SubscribersService,
    private readonly services: ServicesService,
    private readonly profiles: BillingProfilesService,
    private readonly invoices: InvoicesService,
    private readonly charges: ChargesRepository,
    private readonly taxRates: TaxRatesService,
    private readonly clock: Clock,
  ) {}

  async create(auth: AuthContext, subscriberId: string, dto: CreateChargeDto): Promise<ChargeDto> {
    const { tenantId } = auth;
    const quantity = dto.quantity ?? 1;
    if (dto.amount * quantity > MAX_AMOUNT) {
      throw new ApiError(
        'validation_failed',
        `amount × quantity exceeds ${MAX_AMOUNT}, the largest amount kept.`,
        'amount',
      );
    }
    if (dto.service_id !== undefined) {
      const service = await this.services.get(tenantId, dto.service_id).catch(() => null);
      if (!service || service.subscriberId !== subscriberId) {
        throw new ApiError(
          'invalid_reference',
          `Subscriber ${subscriberId} has no service ${dto.service_id}.`,
          'service_id',
        );
      }
    }
    return this.transactionRunner.run(auth, async (tx) => {
      const subscriber = await this.subscribers.lockIn(tx.manager, tenantId, subscriberId);
      await this.subscribers.assertExists(tx.manager, tenantId, subscriberId, 'subscriber_id');
      const profile = await this.profiles.profileFor(tx.manager, tenantId, subscriber.billingProfileId);
      if (profile && profile.currency !== dto.currency) {
        throw new ApiError(
          'currency_mismatch',
          `The subscriber is billed in ${profile.currency}; the charge is in ${dto.currency}.`,
          'currency',
        );
      }
      await this.taxRates.assertApplicable(tx.manager, tenantId, dto.tax_rate_ids);
      const charge = await this.record(tx, {
        tenantId,
        subscriberId,
        serviceId: dto.service_id ?? null,
        description: dto.description,
        unitAmount: dto.amount,
        quantity,
        currency: dto.currency,
        source: ChargeSource.Api,
        sourceId: null,
        taxRateIds: dto.tax_rate_ids ?? null,
      });
      if (dto.invoice_now) {
        await this.invoices.issuePending(tx, subscriber, dto.currency, profile?.paymentTermsDays ?? 0);
        return ChargeDto.from(
          (await this.charges.findForUpdate(tx.manager, tenantId, subscriberId, charge!.id))!,
        );
      }
      return ChargeDto.from(charge!);
    });
  }

  /**
   * A data cap top-up's price (provisioning's TopUpCharge), in the caller's transaction: the subscriber locked first
   * (the lock order), 422 currency_mismatch when it is billed in another currency; answers the charge's id.
   */
  async recordTopUp(
    tx: Tx,
    form: {
      tenantId: string;
      subscriberId: string;
      serviceId: string;
      topUpId: string;
      description: string;
      amount: number;
      currency: string;
    },
  ): Promise<string> {
    const subscriber = await this.subscribers.lockIn(tx.manager, form.tenantId, form.subscriberId);
    const profile = await this.profiles.profileFor(tx.manager, form.tenantId, subscriber.billingProfileId);
    if (profile && profile.currency !== form.currency) {
      throw new ApiError(
        'currency_mismatch',
        `The subscriber is billed in ${profile.currency}; the plan's top-up is in ${form.currency}.`,
        'price',
      );
    }
    const charge = await this.record(tx, {
      tenantId: form.tenantId,
      subscriberId: form.subscriberId,
      serviceId: form.serviceId,
      description: form.description,
      unitAmount: form.amount,
      quantity: 1,
      currency: form.currency,
      source: ChargeSource.TopUp,
      sourceId: form.topUpId,
    });
    return charge!.id;
  }

  /**
   * Records a charge in the caller's transaction (the subscriber already locked), with its `charge.created` event;
   * null when its source (a debit, a fee of an invoice) was charged before.
   */
  async record(tx: Tx, form: NewCharge): Promise<Charge | null> {
    const now = this.clock.now();
    const charge = Object.assign(new Charge(), {
      tenantId: form.tenantId,
      id: newId('chg', now),
      subscriberId: form.subscriberId,
      serviceId: form.serviceId,
      description: form.description,
      quantity: form.quantity,
      unitAmount: form.unitAmount,
      amount: form.unitAmount * form.quantity,
      currency: form.currency,
      status: ChargeStatus.Pending,
      source: form.source,
      sourceId: form.sourceId,
      periodStart: null,
      periodEnd: null,
      invoiceId: null,
      creditId: null,
      invoicedAt: null,
      createdAt: now,
      taxRateIds: form.taxRateIds ?? null,
    });
    if (!(await this.charges.insertOnce(tx.manager, charge))) {
      return null;
    }
    await this.events.append(tx, {
      tenantId: form.tenantId,
      type: 'charge.created',
      subjectId: charge.id,
      object: ChargeDto.from(charge),
    });
    return charge;
  }

  async list(auth: AuthContext, subscriberId: string, query: ListChargesQueryDto): Promise<Page<Charge>> {
    await this.subscribers.getById(auth.tenantId, subscriberId);
    return this.charges.page(
      this.dataSource.manager,
      auth.tenantId,
      subscriberId,
      query.status ?? [ChargeStatus.Pending],
      query,
    );
  }

  /** Deletes a pending charge (409 invalid_state_transition once invoiced), with `charge.deleted`. */
  remove(auth: AuthContext, subscriberId: string, id: string): Promise<ChargeDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      await this.subscribers.lockIn(tx.manager, tenantId, subscriberId);
      const charge = await this.charges.findForUpdate(tx.manager, tenantId, subscriberId, id);
      if (!charge) {
        throw ApiError.notFound('charge', id);
      }
      await assertIfMatch(() => ChargeDto.from(charge));
      if (charge.status !== ChargeStatus.Pending) {
        throw new ApiError(
          'invalid_state_transition',
          `Charge ${id} was invoiced (${charge.invoiceId ?? charge.creditId}) and can no longer be deleted.`,
        );
      }
      await this.charges.delete(tx.manager, tenantId, id);
      const answer = ChargeDto.from(charge);
      await this.events.append(tx, { tenantId, type: 'charge.deleted', subjectId: id, object: answer });
      return answer;
    });
  }
}
