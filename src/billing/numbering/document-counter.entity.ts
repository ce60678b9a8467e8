import { Check, Column, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { Tenant } from '../../gateway';
import type { NumberingSeries } from '../../common/numbering-format';

/**
 * The last sequence taken in each numbering series of a tenant, per period: the year of the issue date while the
 * series restarts each year, else 0. Taken under the row's lock in the issuing transaction (NumberingRepository), so
 * numbers never repeat and a rollback gives them back: a series is gapless. Row 0 is also the series' lock.
 */
@Entity('document_counters')
@Check('chk_document_counters_series', `"series" IN ('invoice', 'credit_note')`)
@Check('chk_document_counters_period', `"period" = 0 OR "period" BETWEEN 1 AND 9999`)
@Check('chk_document_counters_last_sequence', `"last_sequence" >= 0`)
export class DocumentCounter {
  @ForeignKey(() => Tenant, { name: 'fk_document_counters_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  series: NumberingSeries;

  /** The issue date's year while the series restarts yearly; 0 for the never-restarting sequence. */
  @PrimaryColumn('integer')
  period: number;

  /** The last sequence taken (0: none yet). */
  @Column('integer')
  lastSequence: number;

  /** The latest issue date a sequence of this row was taken for; null: none (or not known, before numbering). */
  @Column('date', { nullable: true })
  lastIssuedOn: string | null;
}
