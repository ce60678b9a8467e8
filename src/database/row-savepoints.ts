import type { ApiError } from '../common/errors/api-error';
import type { Tx } from './transaction-runner';

/** A row's result in an import: what writing it did, or why it was refused. */
export type RowResult<Outcome> = { row: number; outcome: Outcome } | { row: number; error: ApiError };

/**
 * Writes `rows` one by one in the caller's transaction, each in its own savepoint (`savepoint`): a row `refusal`
 * explains (it answers the row's error, or null) is rolled back alone and answered with that error, and the next
 * row goes on; an error it does not explain is thrown and ends the transaction. One result per row, in order.
 */
export async function eachRowInSavepoint<Row extends { row: number }, Outcome>(
  tx: Tx,
  savepoint: string,
  rows: readonly Row[],
  write: (row: Row) => Promise<Outcome>,
  refusal: (error: unknown) => ApiError | null,
): Promise<RowResult<Outcome>[]> {
  const results: RowResult<Outcome>[] = [];
  for (const each of rows) {
    try {
      results.push({ row: each.row, outcome: await tx.savepoint(savepoint, () => write(each)) });
    } catch (error) {
      const refused = refusal(error);
      if (!refused) {
        throw error;
      }
      results.push({ row: each.row, error: refused });
    }
  }
  return results;
}
