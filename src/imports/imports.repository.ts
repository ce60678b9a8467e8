import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { paginate, type PageQueryDto } from '../common/pagination';
import { recordsetInsert } from '../database/entity-columns';
import { ImportJob, ImportRow, ImportRowError, ImportStatus } from './import.entity';

/** A chunk of an upload's rows, or a batch's refused rows: one statement, one parameter each. */
const INSERT_ROWS = recordsetInsert(ImportRow, 'import_rows');
const INSERT_ERRORS = recordsetInsert(ImportRowError, 'import_errors');

/** What a batch adds to its job's figures. */
export interface BatchFigures {
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
}

/** The only place imports, import_rows and import_errors are read and written. */
@Injectable()
export class ImportsRepository {
  /**
   * A job that starts receiving its upload, held for `holdMs` by the database's clock (lease_until): the time a
   * test tenant's records are dated by says nothing of how long an upload has been arriving.
   */
  async insertReceiving(manager: EntityManager, job: ImportJob, holdMs: number): Promise<void> {
    await manager
      .createQueryBuilder()
      .insert()
      .into(ImportJob)
      .values({ ...job, leaseUntil: () => `now() + make_interval(secs => ${Math.ceil(holdMs / 1000)})` })
      .execute();
  }

  async insertRows(manager: EntityManager, rows: readonly ImportRow[]): Promise<void> {
    if (rows.length > 0) {
      await manager.query(INSERT_ROWS.sql, INSERT_ROWS.params(rows));
    }
  }

  /** The upload is stored: the job becomes visible and claimable. */
  async queue(manager: EntityManager, id: string, rowsTotal: number, at: Date): Promise<boolean> {
    const { affected } = await manager.update(
      ImportJob,
      { id, status: ImportStatus.Receiving },
      { status: ImportStatus.Queued, rowsTotal, leaseUntil: null, updatedAt: at },
    );
    return affected === 1;
  }

  /** An upload refused or cut off: its job and rows go (the rows by cascade). */
  async discard(manager: EntityManager, id: string): Promise<void> {
    await manager.delete(ImportJob, { id, status: ImportStatus.Receiving });
  }

  /** Uploads an instance died receiving: a job still receiving once its hold (insertReceiving) ran out is discarded. */
  async discardAbandoned(manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM imports WHERE status = 'receiving' AND lease_until < now()`);
  }

  /** Takes one queued or running job whose claim is free or ran out, for `leaseMs` by the database's clock. */
  async claim(manager: EntityManager, leaseId: string, leaseMs: number): Promise<ImportJob | null> {
    const [rows]: [Record<string, unknown>[], number] = await manager.query(
      `UPDATE imports j SET lease_id = $1, lease_until = now() + make_interval(secs => $2::float8 / 1000),
              status = 'running'
        WHERE j.id = (SELECT id FROM imports
                       WHERE status IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < now())
                       ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING j.tenant_id, j.id`,
      [leaseId, leaseMs],
    );
    const claimed = rows[0] as { tenant_id: string; id: string } | undefined;
    return claimed ? manager.findOneBy(ImportJob, { tenantId: claimed.tenant_id, id: claimed.id }) : null;
  }

  /** Extends the claim; false when it is no longer this worker's (it ran out and another took the job). */
  async renew(manager: EntityManager, id: string, leaseId: string, leaseMs: number): Promise<boolean> {
    const [, affected]: [unknown, number] = await manager.query(
      `UPDATE imports SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
        WHERE id = $1 AND lease_id = $2 AND status = 'running'`,
      [id, leaseId, leaseMs],
    );
    return affected === 1;
  }

  /** The job, locked, if this worker's claim still holds. */
  lockClaimed(manager: EntityManager, id: string, leaseId: string): Promise<ImportJob | null> {
    return manager
      .getRepository(ImportJob)
      .createQueryBuilder('job')
      .setLock('pessimistic_write')
      .where('job.id = :id AND job.leaseId = :leaseId', { id, leaseId })
      .getOne();
  }

  /** The next rows after the cursor, in row order. */
  rowsAfter(manager: EntityManager, importId: string, after: number, limit: number): Promise<ImportRow[]> {
    return manager
      .getRepository(ImportRow)
      .createQueryBuilder('r')
      .where('r.importId = :importId AND r.row > :after', { importId, after })
      .orderBy('r.row')
      .limit(limit)
      .getMany();
  }

  async insertErrors(manager: EntityManager, errors: readonly ImportRowError[]): Promise<void> {
    if (errors.length > 0) {
      await manager.query(INSERT_ERRORS.sql, INSERT_ERRORS.params(errors));
    }
  }

  /** A batch done: its figures added, the cursor moved to `upTo`, its rows dropped; in the batch's transaction. */
  async advance(
    manager: EntityManager,
    job: ImportJob,
    upTo: number,
    figures: BatchFigures,
    at: Date,
  ): Promise<void> {
    await manager.query(
      `UPDATE imports SET rows_done = $2, created = created + $3, updated = updated + $4,
              unchanged = unchanged + $5, failed = failed + $6, updated_at = $7
        WHERE id = $1`,
      [job.id, upTo, figures.created, figures.updated, figures.unchanged, figures.failed, at],
    );
    await manager.query(`DELETE FROM import_rows WHERE import_id = $1 AND row <= $2`, [job.id, upTo]);
  }

  /** The job's end: completed or failed, the claim released; in the caller's transaction. */
  async finish(
    manager: EntityManager,
    id: string,
    status: ImportStatus.Completed | ImportStatus.Failed,
    error: string | null,
    at: Date,
  ): Promise<void> {
    await manager.update(
      ImportJob,
      { id },
      { status, error, leaseId: null, leaseUntil: null, completedAt: at, updatedAt: at },
    );
    await manager.delete(ImportRow, { importId: id });
  }

  /** The tenant's job (one still receiving its upload is not one yet), or 404. */
  async getById(manager: EntityManager, tenantId: string, id: string): Promise<ImportJob> {
    const job = await manager.findOneBy(ImportJob, { tenantId, id });
    if (!job || job.status === ImportStatus.Receiving) {
      throw ApiError.notFound('import', id);
    }
    return job;
  }

  page(
    manager: EntityManager,
    tenantId: string,
    status: ImportStatus | undefined,
    query: PageQueryDto,
  ): Promise<Page<ImportJob>> {
    const qb = manager
      .getRepository(ImportJob)
      .createQueryBuilder('job')
      .where('job.tenantId = :tenantId', { tenantId });
    if (status) {
      qb.andWhere('job.status = :status', { status });
    } else {
      qb.andWhere("job.status <> 'receiving'");
    }
    return paginate(qb, query);
  }

  /** A job's refused rows, in row order. */
  errorsPage(
    manager: EntityManager,
    tenantId: string,
    importId: string,
    query: PageQueryDto,
  ): Promise<Page<ImportRowError>> {
    const qb = manager
      .getRepository(ImportRowError)
      .createQueryBuilder('e')
      .where('e.tenantId = :tenantId AND e.importId = :importId', { tenantId, importId });
    return paginate(qb, query, 'oldest');
  }

  /** Deletes every row of the tenant in import_errors, imports, in that order: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    for (const table of ['import_errors', 'imports']) {
      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
  }
}
