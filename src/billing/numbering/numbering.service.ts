import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import {
  DEFAULT_NUMBER_FORMATS,
  formatDocumentNumber,
  type NumberingSeries,
  NUMBERING_SERIES,
  parseNumberFormat,
} from '../../common/numbering-format';
import { isDateOnly } from '../../common/validation/is-date-only';
import { TenantSettingsRepository, type TenantSettings } from '../../gateway';
import { NumberingRepository } from './numbering.repository';

/** A number taken from a series: its place in the series and the number as the document shows it. */
export interface DocumentNumber {
  sequence: number;
  number: string;
}

/** A series' format and yearly restart as the tenant set them (the gateway's tenant_settings). */
const SERIES_SETTINGS: Record<NumberingSeries, (settings: TenantSettings) => [string, boolean]> = {
  invoice: (settings) => [settings.invoiceNumberFormat, settings.invoiceNumberRestartYearly],
  credit_note: (settings) => [settings.creditNoteNumberFormat, settings.creditNoteNumberRestartYearly],
};

/** The series' settings of the tenant's row, or the defaults while it has none. */
function seriesSettings(
  settings: TenantSettings | null,
  series: NumberingSeries,
): { format: string; restartYearly: boolean } {
  const [format, restartYearly] = settings
    ? SERIES_SETTINGS[series](settings)
    : [DEFAULT_NUMBER_FORMATS[series], false];
  return { format: format ?? DEFAULT_NUMBER_FORMATS[series], restartYearly: restartYearly ?? false };
}

/**
 * The tenant's numbering series (docs/billing.md, "Document numbers"): numbers are taken in the issuing transaction,
 * under the series' lock until it commits, so they are gapless per series (a rollback gives them back) and never
 * repeat, and formatted with the tenant's format for the series (tenant_settings; the default without one).
 */
@Injectable()
export class NumberingService {
  constructor(
    private readonly counters: NumberingRepository,
    private readonly tenantSettings: TenantSettingsRepository,
  ) {}

  /**
   * The next `count` numbers of `series`, in order, for documents issued on `issuedOn` (YYYY-MM-DD: the year a
   * yearly-restarting series counts in, and the {YYYY}/{YY}/{MM} of the format). `manager` must be a transaction's:
   * the series stays locked until it ends.
   */
  async reserve(
    manager: EntityManager,
    tenantId: string,
    series: NumberingSeries,
    count: number,
    issuedOn: string,
  ): Promise<DocumentNumber[]> {
    if (!NUMBERING_SERIES.includes(series)) {
      throw new RangeError(`Unknown numbering series ${String(series)}`);
    }
    if (!Number.isSafeInteger(count) || count < 0) {
      throw new RangeError(`A count of document numbers is an integer from 0, not ${count}`);
    }
    if (!isDateOnly(issuedOn)) {
      throw new RangeError(`An issue date is YYYY-MM-DD, not ${String(issuedOn)}`);
    }
    if (count === 0) {
      return [];
    }
    if (!manager.queryRunner?.isTransactionActive) {
      // Outside a transaction the lock would end with the first statement: numbers could repeat.
      throw new Error('NumberingService.reserve needs a transaction: pass its manager (tx.manager)');
    }
    const settings = seriesSettings(await this.tenantSettings.find(manager, tenantId), series);
    await this.counters.lockSeries(manager, tenantId, series);
    const format = parseNumberFormat(settings.format);
    const period = settings.restartYearly ? Number(issuedOn.slice(0, 4)) : 0;
    const first = await this.counters.take(manager, tenantId, series, period, count, issuedOn);
    return Array.from({ length: count }, (_, index) => ({
      sequence: first + index,
      number: formatDocumentNumber(format, first + index, issuedOn),
    }));
  }

  /** The next number of `series` (reserve of one). */
  async next(
    manager: EntityManager,
    tenantId: string,
    series: NumberingSeries,
    issuedOn: string,
  ): Promise<DocumentNumber> {
    const [taken] = await this.reserve(manager, tenantId, series, 1, issuedOn);
    return taken;
  }
}
