import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { assertIfMatch } from '../../common/http/etag';
import { newId } from '../../common/ids';
import type { AuthContext } from '../../common/request-context';
import { taxRateIdsError } from '../../common/validation/tax-rate-ids';
import { TransactionRunner } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { CreateTaxRateDto, ListTaxRatesQueryDto, TaxRateDto, UpdateTaxRateDto } from './dto/tax-rate.dto';
import { formatPercentage } from './tax-computation';
import { TaxRate } from './tax-rate.entity';
import { TaxRatesRepository } from './tax-rates.repository';
import { Clock } from '../../common/clock';

/** The API field of each column a PATCH may change, in the order they are reported. */
const FIELDS = {
  name: 'name',
  percentage: 'percentage',
  inclusive: 'inclusive',
  compound: 'compound',
  country: 'country',
  region: 'region',
  description: 'description',
  active: 'active',
} as const satisfies Partial<Record<keyof TaxRate, string>>;

type EditableColumn = keyof typeof FIELDS;

/**
 * What an issued invoice shows or computes with, fixed once a rate is used: only `active` (archiving) and
 * `description` change then.
 */
const FIXED_WHEN_USED: readonly EditableColumn[] = [
  'name',
  'percentage',
  'inclusive',
  'compound',
  'country',
  'region',
];

@Injectable()
export class TaxRatesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly rates: TaxRatesRepository,
    private readonly clock: Clock,
  ) {}

  create(auth: AuthContext, dto: CreateTaxRateDto): Promise<TaxRateDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const now = this.clock.now();
      const rate = Object.assign(new TaxRate(), {
        tenantId,
        id: newId('txr', now),
        name: dto.name,
        percentage: formatPercentage(dto.percentage),
        inclusive: dto.inclusive ?? false,
        compound: dto.compound ?? false,
        country: dto.country ?? null,
        region: dto.region ?? null,
        description: dto.description ?? null,
        active: dto.active ?? true,
        firstUsedAt: null,
        createdAt: now,
        updatedAt: now,
      });
      await this.rates.insert(tx.manager, rate);
      const answer = TaxRateDto.from(rate);
      await this.events.append(tx, {
        tenantId,
        type: 'tax_rate.created',
        subjectId: rate.id,
        object: answer,
      });
      return answer;
    });
  }

  /** Changes the fields sent; 409 tax_rate_in_use when a used rate would compute or read differently. */
  update(auth: AuthContext, id: string, dto: UpdateTaxRateDto): Promise<TaxRateDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const rate = await this.rates.lockForUpdate(tx.manager, tenantId, id);
      await assertIfMatch(() => TaxRateDto.from(rate));
      const next: Partial<Pick<TaxRate, EditableColumn>> = {
        name: dto.name,
        percentage: dto.percentage === undefined ? undefined : formatPercentage(dto.percentage),
        inclusive: dto.inclusive,
        compound: dto.compound,
        country: dto.country,
        region: dto.region,
        description: dto.description,
        active: dto.active,
      };
      const changed = (Object.keys(FIELDS) as EditableColumn[]).filter(
        (column) => next[column] !== undefined && next[column] !== rate[column],
      );
      const fixed = changed.find((column) => FIXED_WHEN_USED.includes(column));
      if (fixed && rate.firstUsedAt) {
        throw new ApiError(
          'tax_rate_in_use',
          `Tax rate ${id} is used by an invoice, so its ${FIELDS[fixed]} cannot change: archive it (active: false) ` +
            'and create a new rate.',
          FIELDS[fixed],
        );
      }
      if (changed.length === 0) {
        return TaxRateDto.from(rate);
      }
      Object.assign(rate, Object.fromEntries(changed.map((column) => [column, next[column]])), {
        updatedAt: this.clock.now(),
      });
      await this.rates.update(tx.manager, rate, [...changed, 'updatedAt']);
      const answer = TaxRateDto.from(rate);
      await this.events.append(tx, {
        tenantId,
        type: 'tax_rate.updated',
        subjectId: rate.id,
        object: answer,
        details: { changed_fields: changed.map((column) => FIELDS[column]) },
      });
      return answer;
    });
  }

  getById(tenantId: string, id: string): Promise<TaxRate> {
    return this.rates.getById(this.dataSource.manager, tenantId, id);
  }

  list(tenantId: string, query: ListTaxRatesQueryDto): Promise<Page<TaxRate>> {
    const active = query.active === undefined ? undefined : query.active === 'true';
    return this.rates.page(this.dataSource.manager, tenantId, active, query);
  }

  /**
   * A `tax_rate_ids` list a billing profile or a charge is given, checked in the caller's transaction: 422
   * invalid_reference at `field.N` for an id that is no active rate of the tenant, 422 validation_failed when it
   * mixes inclusive and exclusive rates. Null and absent lists pass.
   */
  async assertApplicable(
    manager: EntityManager,
    tenantId: string,
    ids: readonly string[] | null | undefined,
    field = 'tax_rate_ids',
  ): Promise<void> {
    if (!ids || ids.length === 0) {
      return;
    }
    const error = taxRateIdsError(ids, await this.rates.activeByIds(manager, tenantId, ids), field);
    if (error) {
      throw error;
    }
  }
}
