import type { Actor } from '../common/request-context';
import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../gateway';

export enum ImportStatus {
  /** The upload is still being read and stored: not yet a resource anyone sees. */
  Receiving = 'receiving',
  Queued = 'queued',
  Running = 'running',
  Completed = 'completed',
  Failed = 'failed',
}

/** The statuses the API shows (a job still receiving its upload is not answered yet). */
export const IMPORT_STATUSES = [
  ImportStatus.Queued,
  ImportStatus.Running,
  ImportStatus.Completed,
  ImportStatus.Failed,
] as const;

export enum ImportKind {
  Subscribers = 'subscribers',
  Services = 'services',
  OpeningBalances = 'opening_balances',
}
export const IMPORT_KINDS = Object.values(ImportKind);

export enum ImportFormat {
  Csv = 'csv',
  Jsonl = 'jsonl',
}
export const IMPORT_FORMATS = Object.values(ImportFormat);

/** An import job: the upload stored as rows (import_rows), worked through in batches by ImportWorker under a lease. */
@Entity('imports')
@Index('ix_imports_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_imports_tenant_status_created', ['tenantId', 'status', 'createdAt', 'id'])
@Index('uq_imports_tenant_id', ['tenantId', 'id'], { unique: true })
// The worker's claim walks the jobs still to do.
@Index('ix_imports_claimable', ['leaseUntil'], { where: `"status" IN ('queued', 'running')` })
@Check('chk_imports_status', `"status" IN ('receiving', 'queued', 'running', 'completed', 'failed')`)
@Check('chk_imports_kind', `"kind" IN ('subscribers', 'services', 'opening_balances')`)
@Check('chk_imports_format', `"format" IN ('csv', 'jsonl')`)
@Check(
  'chk_imports_counts',
  `"rows_done" >= 0 AND "rows_done" <= "rows_total" AND "created" >= 0 AND "updated" >= 0 AND "unchanged" >= 0 AND "failed" >= 0`,
)
export class ImportJob {
  @ForeignKey(() => Tenant, { name: 'fk_imports_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  kind: ImportKind;

  @Column('text')
  format: ImportFormat;

  @Column('boolean')
  dryRun: boolean;

  @Column('text')
  status: ImportStatus;

  @Column('integer')
  rowsTotal: number;

  /** The cursor: rows 1..rows_done are done, committed with their batch's effects. */
  @Column('integer')
  rowsDone: number;

  @Column('integer')
  created: number;

  @Column('integer')
  updated: number;

  @Column('integer')
  unchanged: number;

  @Column('integer')
  failed: number;

  /** Why the job failed as a whole (null unless failed). */
  @Column('text', { nullable: true })
  error: string | null;

  /** Who uploaded it: the records it makes carry the same actor and request id in their events. */
  @Column('jsonb')
  actor: Actor;

  @Column('text', { nullable: true })
  requestId: string | null;

  @Column('text', { nullable: true })
  leaseId: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  leaseUntil: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  completedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/** A row refused before validation: the catalog's code, the field (if one is at fault) and why. */
export interface RowProblem {
  code: string;
  field: string | null;
  message: string;
}

/** One uploaded row waiting for the worker: deleted with the batch that does it. */
@Entity('import_rows')
export class ImportRow {
  @ForeignKey(() => ImportJob, { name: 'fk_import_rows_import', onDelete: 'CASCADE' })
  @PrimaryColumn('text')
  importId: string;

  /** 1-based: the first record after a CSV's header, the first line of JSON Lines. */
  @PrimaryColumn('integer')
  row: number;

  /** The row as a create body (CSV columns mapped to fields); null when the line is not JSON. */
  @Column('jsonb', { nullable: true })
  data: Record<string, unknown> | null;

  /** Why the row could not be read (a line that is not JSON, a short CSV record), else null. */
  @Column('jsonb', { nullable: true })
  problem: RowProblem | null;
}

/** A refused row: the first failure of its validation or its write, with the field and the catalog's code. */
@Entity('import_errors')
@Index('ix_import_errors_page', ['tenantId', 'importId', 'createdAt', 'id'])
export class ImportRowError {
  @ForeignKey(() => Tenant, { name: 'fk_import_errors_tenant' })
  @Column('text')
  tenantId: string;

  @ForeignKey(() => ImportJob, { name: 'fk_import_errors_import', onDelete: 'CASCADE' })
  @PrimaryColumn('text')
  importId: string;

  /** The row number zero-padded to 9 digits: the page's cursor key, in row order. */
  @PrimaryColumn('text')
  id: string;

  @Column('integer')
  row: number;

  @Column('text', { nullable: true })
  externalId: string | null;

  @Column('text', { nullable: true })
  field: string | null;

  @Column('text')
  code: string;

  @Column('text')
  message: string;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
