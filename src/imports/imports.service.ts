import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { Page } from '../common/envelope/envelope';
import { hasScope, type Scope } from '../common/auth/scopes';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids';
import { PageQueryDto } from '../common/pagination';
import type { AuthContext } from '../common/request-context';
import { TransactionRunner } from '../database/transaction-runner';
import { CreateImportQueryDto, ImportDto, ListImportsQueryDto } from './dto/import.dto';
import {
  IMPORT_FORMATS,
  IMPORT_KINDS,
  ImportFormat,
  ImportJob,
  ImportKind,
  ImportRow,
  ImportRowError,
  ImportStatus,
} from './import.entity';
import { ImportWorker } from './import-worker';
import type { StoredRow } from './import-rows';
import { ImportsRepository } from './imports.repository';
import { RowReader, tooLarge } from './row-reader';
import { type FormFields, openUpload, type UploadedFile } from './upload';

/** Rows stored per statement while an upload is read. */
const STORE_CHUNK = 1000;
/** A job still receiving its upload an hour after it began is one an instance died reading: the worker discards it. */
const UPLOAD_HOLD_MS = 60 * 60 * 1000;

interface ImportOptions {
  kind: ImportKind;
  dryRun: boolean;
  format: ImportFormat;
}

/**
 * The scope a kind needs besides POST /imports' own subscribers:write: what its records' own create operation asks
 * (POST /subscribers/{id}/services, POST /transactions), so an import makes nothing its token could not make by hand.
 */
const KIND_SCOPES: Record<ImportKind, Scope | null> = {
  [ImportKind.Subscribers]: null,
  [ImportKind.Services]: 'provisioning:write',
  [ImportKind.OpeningBalances]: 'billing:write',
};

/** 403 insufficient_scope when the token may not make the kind's records. */
function assertKindScope(auth: AuthContext, kind: ImportKind): void {
  const scope = KIND_SCOPES[kind];
  if (scope !== null && !hasScope(auth.scopes, scope)) {
    throw new ApiError('insufficient_scope', `An import of ${kind} requires the scope ${scope}.`, 'kind', {
      'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"`,
    });
  }
}

/** A form field's value against its allowed values: 422 validation_failed naming the field otherwise. */
function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ApiError('validation_failed', `${name} must be one of ${allowed.join(', ')}`, name);
  }
  return value as T;
}

/** The options of an upload: the query's, then a multipart upload's form fields (which win), then its media type. */
function resolveOptions(query: CreateImportQueryDto, file: UploadedFile): ImportOptions {
  const fields: FormFields = file.fields;
  const kind = fields.kind ?? query.kind;
  if (kind === undefined) {
    throw new ApiError(
      'missing_field',
      `kind is required: what the rows are (${IMPORT_KINDS.join(', ')}).`,
      'kind',
    );
  }
  const format = fields.format ?? query.format ?? file.format;
  if (format === null || format === undefined) {
    throw new ApiError(
      'missing_field',
      'format is required when the file part does not say (text/csv, application/x-ndjson, or a .csv or .jsonl name).',
      'format',
    );
  }
  return {
    kind: oneOf('kind', kind, IMPORT_KINDS),
    format: oneOf('format', format, IMPORT_FORMATS),
    dryRun: oneOf('dry_run', fields.dry_run ?? query.dry_run ?? 'false', ['true', 'false']) === 'true',
  };
}

/** Imports as API resources: an upload read and stored as rows (202, done by ImportWorker), read and listed. */
@Injectable()
export class ImportsService {
  private readonly logger = new Logger('Imports');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly transactionRunner: TransactionRunner,
    private readonly imports: ImportsRepository,
    private readonly worker: ImportWorker,
  ) {}

  /**
   * Reads the upload as it arrives and stores its rows a chunk at a time under a job still `receiving` (seen by
   * nobody); once the whole file is read the job is queued and the worker woken. A file refused midway (too large,
   * not UTF-8, not CSV) leaves nothing: its job and rows are discarded.
   */
  async create(auth: AuthContext, query: CreateImportQueryDto, req: Request): Promise<ImportDto> {
    let file: UploadedFile;
    try {
      file = await openUpload(req);
    } catch (error) {
      throw this.refuse(req, error);
    }
    let job: ImportJob | null = null;
    try {
      const options = resolveOptions(query, file);
      assertKindScope(auth, options.kind);
      const now = this.clock.now();
      job = Object.assign(new ImportJob(), {
        tenantId: auth.tenantId,
        id: newId('imp', now),
        kind: options.kind,
        format: options.format,
        dryRun: options.dryRun,
        status: ImportStatus.Receiving,
        rowsTotal: 0,
        rowsDone: 0,
        created: 0,
        updated: 0,
        unchanged: 0,
        failed: 0,
        error: null,
        actor: auth.actor,
        requestId: auth.requestId,
        leaseId: null,
        leaseUntil: null,
        completedAt: null,
        createdAt: now,
        updatedAt: now,
      });
      await this.imports.insertReceiving(this.dataSource.manager, job, UPLOAD_HOLD_MS);
      const rowsTotal = await this.store(job, file, new RowReader(options.kind, options.format));
      const stored = job;
      await this.transactionRunner.run(auth, async (tx) => {
        if (!(await this.imports.queue(tx.manager, stored.id, rowsTotal, this.clock.now()))) {
          // Held past UPLOAD_HOLD_MS, the job was discarded as abandoned: nothing of it is left.
          throw new ApiError(
            'invalid_import_file',
            'The upload took longer than an hour to arrive and was discarded; send it again.',
          );
        }
        tx.afterCommit(() => this.worker.wake());
      });
      return ImportDto.from(await this.imports.getById(this.dataSource.manager, auth.tenantId, job.id));
    } catch (error) {
      if (job) {
        await this.imports.discard(this.dataSource.manager, job.id);
      }
      throw this.refuse(req, error);
    }
  }

  /** Reads the file to its end, storing its rows STORE_CHUNK at a time; answers how many rows it has. */
  private async store(job: ImportJob, file: UploadedFile, reader: RowReader): Promise<number> {
    let pending: StoredRow[] = [];
    const flush = async () => {
      const rows = pending.map(({ row, data, problem }) =>
        Object.assign(new ImportRow(), { importId: job.id, row, data, problem }),
      );
      pending = [];
      await this.imports.insertRows(this.dataSource.manager, rows);
    };
    try {
      for await (const chunk of file.chunks) {
        pending.push(...reader.push(chunk));
        if (pending.length >= STORE_CHUNK) {
          await flush();
        }
      }
    } catch (error) {
      if (error instanceof ApiError) {
        throw error;
      }
      throw new ApiError(
        'invalid_import_file',
        'The upload did not arrive whole: it was cut off or malformed.',
      );
    }
    if (file.truncated()) {
      throw tooLarge();
    }
    pending.push(...reader.end());
    await flush();
    return reader.rowCount;
  }

  /**
   * The answer to an upload refused before its end: the rest of the body is read and dropped (never stored or
   * parsed), so the client gets its answer on a connection still in step.
   */
  private refuse(req: Request, error: unknown): unknown {
    if (!req.complete) {
      req.resume();
    }
    if (!(error instanceof ApiError)) {
      this.logger.error({ msg: 'import upload failed', err: (error as Error).message });
    }
    return error;
  }

  get(tenantId: string, id: string): Promise<ImportJob> {
    return this.imports.getById(this.dataSource.manager, tenantId, id);
  }

  list(tenantId: string, query: ListImportsQueryDto): Promise<Page<ImportJob>> {
    return this.imports.page(this.dataSource.manager, tenantId, query.status, query);
  }

  /** The rows an import refused, in row order; 404 for an unknown import. */
  async errors(tenantId: string, id: string, query: PageQueryDto): Promise<Page<ImportRowError>> {
    await this.imports.getById(this.dataSource.manager, tenantId, id);
    return this.imports.errorsPage(this.dataSource.manager, tenantId, id, query);
  }
}
