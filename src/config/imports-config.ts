type Env = Record<string, string | undefined>;
type ReadInteger = (env: Env, name: string, fallback: number, min: number, max: number) => number;
type ReadBoolean = (env: Env, name: string, fallback: boolean) => boolean;

export interface ImportsConfig {
  /** Run the import worker in this process. */
  workerEnabled: boolean;
  /** How often the worker looks for queued imports (an upload wakes it at once). */
  pollMs: number;
  /** Rows imported per transaction. */
  batchSize: number;
  /** How long a claimed import is its worker's without renewal; a dead worker's import is taken up after it. */
  leaseMs: number;
}

/** The import worker's settings (docs/imports.md), read by app-config's own checked readers. */
export function importsConfig(env: Env, integer: ReadInteger, boolean: ReadBoolean): ImportsConfig {
  return {
    workerEnabled: boolean(env, 'IMPORT_WORKER_ENABLED', true),
    pollMs: integer(env, 'IMPORT_POLL_MS', 1000, 10, 60_000),
    batchSize: integer(env, 'IMPORT_BATCH_SIZE', 1000, 1, 5000),
    leaseMs: integer(env, 'IMPORT_LEASE_MS', 60_000, 100, 3_600_000),
  };
}
