import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { type NumberingSeries } from '../../common/numbering-format';

/**
 * The only place the document_counters table is read and written.
 *
 * Taking numbers is two statements in the caller's transaction. `lockSeries` locks the series' period-0 row (made on
 * first use) until commit, so every reservation of a series, whichever period it counts in, waits for the one before
 * to commit or roll back. `take` then advances the period's counter, in a statement
 * whose snapshot is taken after the lock, so it sees every number committed before: a rollback gives the numbers back
 * (nothing after them was taken meanwhile), and no number is taken twice.
 *
 * When the tenant turns the yearly restart on or off, the other kind of counter's numbers of the same year are never
 * repeated: a yearly counter continues after the period-0 one when that one issued numbers in its year (its
 * last_issued_on), and the period-0 counter continues after the yearly counter of the issue date's year.
 */
@Injectable()
export class NumberingRepository {
  /** Locks the series until commit. */
  async lockSeries(manager: EntityManager, tenantId: string, series: NumberingSeries): Promise<void> {
    await manager.query(
      `INSERT INTO document_counters AS c (tenant_id, series, period, last_sequence, last_issued_on)
       VALUES ($1, $2, 0, 0, NULL)
       ON CONFLICT (tenant_id, series, period) DO UPDATE SET last_sequence = c.last_sequence`,
      [tenantId, series],
    );
  }

  /**
   * Advances the series' counter of `period` (the issue date's year, or 0) by `count` and answers the first sequence
   * taken. Call it after lockSeries, in the same transaction.
   */
  async take(
    manager: EntityManager,
    tenantId: string,
    series: NumberingSeries,
    period: number,
    count: number,
    issuedOn: string,
  ): Promise<number> {
    const last =
      period === 0
        ? await this.takeNeverRestarting(manager, tenantId, series, count, issuedOn)
        : await this.takeYearly(manager, tenantId, series, period, count, issuedOn);
    if (last === undefined) {
      throw new Error(
        `document_counters: series ${series} of ${tenantId} is not locked (call lockSeries first)`,
      );
    }
    return last - count + 1;
  }

  /** Period 0: after its own last, and after the yearly counter of the issue date's year (restart turned off). */
  private async takeNeverRestarting(
    manager: EntityManager,
    tenantId: string,
    series: NumberingSeries,
    count: number,
    issuedOn: string,
  ): Promise<number | undefined> {
    const [rows] = await manager.query<[{ last_sequence: number }[], number]>(
      `UPDATE document_counters c
          SET last_sequence = GREATEST(c.last_sequence, COALESCE((
                SELECT y.last_sequence FROM document_counters y
                 WHERE y.tenant_id = $1 AND y.series = $2 AND y.period = $3), 0)) + $4,
              last_issued_on = GREATEST(c.last_issued_on, $5::date)
        WHERE c.tenant_id = $1 AND c.series = $2 AND c.period = 0
       RETURNING c.last_sequence`,
      [tenantId, series, Number(issuedOn.slice(0, 4)), count, issuedOn],
    );
    return rows[0]?.last_sequence;
  }

  /** A year: after its own last, and after period 0's when that one issued numbers this year (restart turned on). */
  private async takeYearly(
    manager: EntityManager,
    tenantId: string,
    series: NumberingSeries,
    year: number,
    count: number,
    issuedOn: string,
  ): Promise<number | undefined> {
    const rows = await manager.query<{ last_sequence: number }[]>(
      `WITH seed AS (
         SELECT COALESCE(MAX(a.last_sequence), 0) AS n FROM document_counters a
          WHERE a.tenant_id = $1 AND a.series = $2 AND a.period = 0 AND a.last_issued_on >= make_date($3, 1, 1)
       )
       INSERT INTO document_counters AS c (tenant_id, series, period, last_sequence, last_issued_on)
       SELECT $1, $2, $3, seed.n + $4, $5::date FROM seed
       ON CONFLICT (tenant_id, series, period) DO UPDATE
          SET last_sequence = GREATEST(c.last_sequence + $4, EXCLUDED.last_sequence),
              last_issued_on = GREATEST(c.last_issued_on, EXCLUDED.last_issued_on)
       RETURNING c.last_sequence`,
      [tenantId, series, year, count, issuedOn],
    );
    return rows[0]?.last_sequence;
  }

  /** Deletes every document_counters row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM document_counters WHERE tenant_id = $1', [tenantId]);
  }
}
