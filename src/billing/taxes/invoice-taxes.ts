import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import type { InvoiceLine } from '../invoices/invoice.entity';
import { TaxContextRepository } from './tax-context.repository';
import { TaxRatesRepository } from './tax-rates.repository';
import {
  TaxComputationError,
  taxLine,
  taxSummary,
  type TaxRateInfo,
  type TaxSummaryRow,
} from './tax-computation';

/** What decides a subscriber's taxes: exemption, and its billing profile's default rates. */
export interface SubscriberTaxes {
  exempt: boolean;
  /** The billing profile's default rates (the subscriber's own profile, else the tenant's default). */
  defaults: string[];
}

/** The rates that apply to a set of lines: who is billed, and the plans' and charges' own lists (null: none). */
export interface TaxContext extends SubscriberTaxes {
  plans: ReadonlyMap<string, string[] | null>;
  charges: ReadonlyMap<string, string[] | null>;
  rates: ReadonlyMap<string, TaxRateInfo>;
}

/** Lines with their taxes, and the invoice's figures from them. */
export interface TaxedLines {
  lines: InvoiceLine[];
  /** Σ of the lines' nets. */
  subtotal: number;
  /** Σ of the lines' taxes (= Σ of the summary rows). */
  taxAmount: number;
  taxes: TaxSummaryRow[];
  /** subtotal + taxAmount: what the invoice owes. */
  total: number;
}

/**
 * The rate ids of one line: its own list when it has one (a manual invoice's line), else its charge's, else its
 * plan's, else the billing profile's defaults; none for an exempt subscriber.
 */
export function rateIdsOf(line: InvoiceLine, context: Omit<TaxContext, 'rates'>): string[] {
  if (context.exempt) {
    return [];
  }
  if (line.tax_rate_ids !== undefined) {
    return line.tax_rate_ids;
  }
  const own =
    (line.charge_id !== undefined ? context.charges.get(line.charge_id) : undefined) ??
    (line.plan_id !== undefined && line.charge_id === undefined
      ? context.plans.get(line.plan_id)
      : undefined);
  return own ?? context.defaults;
}

/**
 * Prices each line's taxes (tax-computation.ts: per line, half away from zero) and sums the invoice: the one path of
 * bill runs, manual invoices, pending charges, fees, prorations and credit notes. A line keeps `amount` as priced
 * (quantity × unit_amount) and gains `tax_rate_ids`, `net_amount`, `tax_amount` and `taxes`.
 */
export function taxLines(lines: readonly InvoiceLine[], context: TaxContext): TaxedLines {
  const taxed = lines.map((line): InvoiceLine => {
    const ids = rateIdsOf(line, context);
    const rates = ids.map((id) => {
      const rate = context.rates.get(id);
      if (!rate) {
        throw new TaxComputationError(`tax rate ${id} not found`);
      }
      return rate;
    });
    const split = taxLine(line.amount, rates);
    return { ...line, tax_rate_ids: ids, net_amount: split.net, tax_amount: split.tax, taxes: split.taxes };
  });
  const subtotal = taxed.reduce((sum, line) => sum + line.net_amount!, 0);
  const taxAmount = taxed.reduce((sum, line) => sum + line.tax_amount!, 0);
  return { lines: taxed, subtotal, taxAmount, taxes: taxSummary(taxed), total: subtotal + taxAmount };
}

/** Every rate id the lines may need under these contexts. */
function rateIdsNeeded(
  contexts: Iterable<Omit<TaxContext, 'rates'>>,
  lines: readonly InvoiceLine[],
): string[] {
  const ids = new Set<string>();
  for (const context of contexts) {
    context.defaults.forEach((id) => ids.add(id));
    for (const list of [...context.plans.values(), ...context.charges.values()]) {
      list?.forEach((id) => ids.add(id));
    }
  }
  for (const line of lines) {
    line.tax_rate_ids?.forEach((id) => ids.add(id));
  }
  return [...ids];
}

/**
 * Gathers what the tax computation needs (TaxContextRepository's reads), taxes lines, and marks the rates an issued
 * document used (a rate in use is never edited in place).
 */
@Injectable()
export class InvoiceTaxes {
  constructor(
    private readonly reads: TaxContextRepository,
    private readonly rateRows: TaxRatesRepository,
  ) {}

  /**
   * The full context of one subscriber's lines (a manual invoice, a pending-charges invoice, a credit note): one read
   * each for the subscriber, the plans and charges the lines name, and the rates.
   */
  async contextFor(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    lines: readonly InvoiceLine[],
  ): Promise<TaxContext> {
    const subscriber = (await this.reads.subscribers(manager, tenantId, [subscriberId])).get(
      subscriberId,
    ) ?? {
      exempt: false,
      defaults: [],
    };
    const base = {
      ...subscriber,
      plans: await this.reads.plans(manager, tenantId, unique(lines.map((line) => line.plan_id))),
      charges: await this.reads.charges(manager, tenantId, unique(lines.map((line) => line.charge_id))),
    };
    return { ...base, rates: await this.reads.rates(manager, tenantId, rateIdsNeeded([base], lines)) };
  }

  /** Loads the rates a batch's contexts may need (one read), share-locked unless `lock` is false. */
  async ratesFor(
    manager: EntityManager,
    tenantId: string,
    contexts: Iterable<Omit<TaxContext, 'rates'>>,
    lines: readonly InvoiceLine[] = [],
    lock = true,
  ): Promise<Map<string, TaxRateInfo>> {
    return this.reads.rates(manager, tenantId, rateIdsNeeded(contexts, lines), lock);
  }

  /**
   * The rates a batch's contexts need (ratesFor), read again share-locked: whether they are still what `read` (read
   * unlocked, ratesFor with `lock` false) found, field for field and none come or gone, so lines taxed with them can
   * be issued.
   */
  async stillAsRead(
    manager: EntityManager,
    tenantId: string,
    contexts: Iterable<Omit<TaxContext, 'rates'>>,
    read: ReadonlyMap<string, TaxRateInfo>,
  ): Promise<boolean> {
    const locked = await this.ratesFor(manager, tenantId, contexts);
    return (
      locked.size === read.size &&
      [...read].every(([id, rate]) => {
        const now = locked.get(id);
        return (
          now !== undefined &&
          now.name === rate.name &&
          now.percentage === rate.percentage &&
          now.inclusive === rate.inclusive &&
          now.compound === rate.compound
        );
      })
    );
  }

  /**
   * Taxes the lines of a manual invoice or credit note, answering a 422 on the line when they cannot be taxed: a rate
   * of its own list that does not exist (invalid_reference, `lines.N.tax_rate_ids.M`), or rates that cannot go
   * together (validation_failed, `lines.N.tax_rate_ids`).
   */
  async taxOrReject(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    lines: readonly InvoiceLine[],
    field = 'lines',
  ): Promise<TaxedLines> {
    const context = await this.contextFor(manager, tenantId, subscriberId, lines);
    lines.forEach((line, index) => {
      const missing = (line.tax_rate_ids ?? []).findIndex((id) => !context.rates.has(id));
      if (missing !== -1) {
        throw new ApiError(
          'invalid_reference',
          `No tax rate ${line.tax_rate_ids![missing]} exists.`,
          `${field}.${index}.tax_rate_ids.${missing}`,
        );
      }
      try {
        taxLines([line], context);
      } catch (error) {
        if (error instanceof TaxComputationError) {
          throw new ApiError(
            'validation_failed',
            `Line ${index} cannot be taxed: ${error.message}.`,
            `${field}.${index}${line.tax_rate_ids !== undefined ? '.tax_rate_ids' : ''}`,
          );
        }
        throw error;
      }
    });
    return taxLines(lines, context);
  }

  /** Marks the rates these issued lines used (first use only): from now on they are never edited in place. */
  markUsed(manager: EntityManager, tenantId: string, lines: readonly InvoiceLine[]): Promise<void> {
    return this.rateRows.markUsed(
      manager,
      tenantId,
      unique(lines.flatMap((line) => (line.taxes ?? []).map((tax) => tax.tax_rate_id))),
    );
  }
}

function unique(values: readonly (string | undefined)[]): string[] {
  return [...new Set(values.filter((value): value is string => value !== undefined))];
}
