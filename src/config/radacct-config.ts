type Env = Record<string, string | undefined>;
type ReadInteger = (env: Env, name: string, fallback: number, min: number, max: number) => number;

/** radacct's retention (docs/network.md, "Accounting at scale"). */
export interface RadacctConfig {
  /** Closed sessions that stopped more than this many days ago are deleted (0: never). */
  retentionDays: number;
  /** Rows per DELETE of the retention worker. */
  pruneBatchSize: number;
  /** How often the retention worker looks. */
  prunePollMs: number;
}

/** The retention worker's settings, read by app-config's own checked reader. */
export function radacctConfig(env: Env, integer: ReadInteger): RadacctConfig {
  return {
    retentionDays: integer(env, 'RADACCT_RETENTION_DAYS', 90, 0, 3650),
    pruneBatchSize: integer(env, 'RADACCT_PRUNE_BATCH_SIZE', 5000, 1, 100_000),
    prunePollMs: integer(env, 'RADACCT_PRUNE_POLL_MS', 3_600_000, 10, 86_400_000),
  };
}
