import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { ApiInteger } from '../../common/swagger/api-types';
import { Optional } from '../../common/validation/optional';
import {
  IMPORT_FORMATS,
  IMPORT_KINDS,
  IMPORT_STATUSES,
  ImportFormat,
  ImportJob,
  ImportKind,
  ImportRowError,
  ImportStatus,
} from '../import.entity';

/** The upload's options as query parameters (a multipart upload may send them as form fields instead). */
export class CreateImportQueryDto {
  @ApiPropertyOptional({
    enum: IMPORT_KINDS,
    example: ImportKind.Subscribers,
    description:
      'What the rows are (docs/imports.md lists each kind’s columns): subscribers, services or opening_balances. Required, here or as a form field of a multipart upload.',
  })
  @Optional()
  @IsIn(IMPORT_KINDS, { message: `kind must be one of ${IMPORT_KINDS.join(', ')}` })
  kind?: ImportKind;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    example: 'false',
    description:
      'true: every row is validated and counted as it would be created or updated; nothing is written.',
  })
  @Optional()
  @IsIn(['true', 'false'], { message: 'dry_run must be true or false' })
  dry_run?: 'true' | 'false';

  @ApiPropertyOptional({
    enum: IMPORT_FORMATS,
    example: ImportFormat.Csv,
    description:
      "The file's format when its media type does not say (a multipart part of application/octet-stream): csv or jsonl.",
  })
  @Optional()
  @IsIn(IMPORT_FORMATS, { message: `format must be one of ${IMPORT_FORMATS.join(', ')}` })
  format?: ImportFormat;
}

export class ListImportsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: IMPORT_STATUSES, description: 'Only imports in this state.' })
  @Optional()
  @IsIn(IMPORT_STATUSES, { message: `status must be one of ${IMPORT_STATUSES.join(', ')}` })
  status?: ImportStatus;
}

@ApiSchema({
  description:
    'An import job: the upload stored, worked through in batches in the background; its progress and figures.',
})
export class ImportDto {
  @ApiProperty({ example: 'imp_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ enum: IMPORT_KINDS, example: ImportKind.Subscribers, description: 'What the rows are.' })
  kind: ImportKind;
  @ApiProperty({
    enum: IMPORT_FORMATS,
    example: ImportFormat.Csv,
    description: 'The file format read: csv (RFC 4180, a header first) or jsonl (one JSON object per line).',
  })
  format: ImportFormat;
  @ApiProperty({ example: false, description: 'true: validated and counted only, nothing written.' })
  dry_run: boolean;
  @ApiProperty({
    enum: IMPORT_STATUSES,
    example: ImportStatus.Running,
    description:
      'queued until a worker takes it, running while its batches are done, then completed (refused rows are listed at /imports/{id}/errors) or failed.',
  })
  status: ImportStatus;
  @ApiInteger({ example: 100000, description: 'Rows in the file (a CSV header is no row).' })
  rows_total: number;
  @ApiInteger({ example: 42000, description: 'Rows done so far: created, updated, unchanged or failed.' })
  rows_done: number;
  @ApiInteger({ example: 41000, description: 'Records created (would be, on a dry run).' })
  created: number;
  @ApiInteger({ example: 900, description: 'Records an existing external_id matched and changed.' })
  updated: number;
  @ApiInteger({
    example: 80,
    description: 'Records an existing external_id matched that the row left as they were.',
  })
  unchanged: number;
  @ApiInteger({ example: 20, description: 'Rows refused: each is listed at /imports/{id}/errors.' })
  failed: number;
  @ApiProperty({
    example: null,
    type: String,
    nullable: true,
    description: 'Why the import failed as a whole (status failed); null otherwise.',
  })
  error: string | null;
  @ApiProperty({ example: '2026-12-01T09:00:00.000Z' }) created_at: string;
  @ApiProperty({ example: '2026-12-01T09:00:12.000Z' }) updated_at: string;
  @ApiProperty({
    example: '2026-12-01T09:00:12.000Z',
    type: String,
    nullable: true,
    description: 'When the import ended (completed or failed); null until then.',
  })
  completed_at: string | null;

  static from(job: ImportJob): ImportDto {
    return {
      id: job.id,
      kind: job.kind,
      format: job.format,
      dry_run: job.dryRun,
      status: job.status,
      rows_total: job.rowsTotal,
      rows_done: job.rowsDone,
      created: job.created,
      updated: job.updated,
      unchanged: job.unchanged,
      failed: job.failed,
      error: job.error,
      created_at: job.createdAt.toISOString(),
      updated_at: job.updatedAt.toISOString(),
      completed_at: job.completedAt?.toISOString() ?? null,
    };
  }
}

@ApiSchema({
  description: 'A row an import refused: where, which field, and the error code the API would answer.',
})
export class ImportErrorDto {
  @ApiInteger({
    example: 17,
    description: 'The row: 1 is the first record after the CSV header, or the first line of JSON Lines.',
  })
  row: number;
  @ApiProperty({
    example: 'crm-000123',
    type: String,
    nullable: true,
    description:
      "The row's key, if it had one: its external_id (an opening balance's row: its subscriber_external_id).",
  })
  external_id: string | null;
  @ApiProperty({
    example: 'email',
    type: String,
    nullable: true,
    description: 'The field at fault (dotted path).',
  })
  field: string | null;
  @ApiProperty({
    example: 'validation_failed',
    maxLength: 64,
    description: 'The error catalog code the same body would get from the create operation (docs/errors.md).',
  })
  code: string;
  @ApiProperty({ example: 'email must be a valid email address' }) message: string;

  static from(error: ImportRowError): ImportErrorDto {
    return {
      row: error.row,
      external_id: error.externalId,
      field: error.field,
      code: error.code,
      message: error.message,
    };
  }
}
