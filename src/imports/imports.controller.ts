import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import { Page } from '../common/envelope/envelope';
import { ApiRequestContent, StreamedBody, UploadedRequest } from '../common/http/streamed-body';
import { PageQueryDto } from '../common/pagination';
import type { AuthContext } from '../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../common/swagger/api-envelope';
import { SkipIdempotency } from '../gateway';
import { CreateImportQueryDto, ImportDto, ImportErrorDto, ListImportsQueryDto } from './dto/import.dto';
import { IMPORT_FORMATS, IMPORT_KINDS } from './import.entity';
import { UPLOAD_LIMITS } from './import-rows';
import { ImportsService } from './imports.service';

const CSV_EXAMPLE =
  'external_id,full_name,email,status,address.city,metadata.plan\ncrm-1,Ada Lovelace,ada@example.net,active,London,fiber-500\n';
const JSONL_EXAMPLE =
  '{"external_id":"crm-2","full_name":"Grace Hopper","status":"active","address":{"city":"Arlington"}}\n';
const FILE_SCHEMA = {
  type: 'string',
  maxLength: UPLOAD_LIMITS.maxBytes,
  description: 'The file, UTF-8 (a leading BOM is dropped), at most 50 MB.',
};
const example = (summary: string, value: unknown) => ({ default: { summary, value } });

/** The upload's media types: the file as the body, or a multipart form (docs/imports.md lists the columns). */
const UPLOAD_CONTENT = {
  'text/csv': { schema: FILE_SCHEMA, examples: example('Two subscribers, as CSV', CSV_EXAMPLE) },
  'application/x-ndjson': {
    schema: FILE_SCHEMA,
    examples: example('One subscriber per line', JSONL_EXAMPLE),
  },
  'application/jsonl': { schema: FILE_SCHEMA, examples: example('One subscriber per line', JSONL_EXAMPLE) },
  'multipart/form-data': {
    schema: {
      type: 'object',
      required: ['file'],
      properties: {
        kind: {
          type: 'string',
          enum: IMPORT_KINDS,
          description: 'What the rows are (or the kind query parameter).',
        },
        dry_run: { type: 'string', enum: ['true', 'false'], description: 'true: validate and count only.' },
        format: { type: 'string', enum: IMPORT_FORMATS, description: 'When the file part does not say.' },
        file: { ...FILE_SCHEMA, format: 'binary' },
      },
    },
    examples: example('A CSV file as a form', { kind: 'subscribers', dry_run: 'false', file: CSV_EXAMPLE }),
  },
};

@ApiTags('Imports')
@ApiBearerAuth()
@Controller('api/v1/imports')
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  @Post()
  @HttpCode(202)
  @RequireScopes('subscribers:write')
  @StreamedBody()
  // The file is the request: a key would fingerprint no body, and rows are idempotent by external_id anyway.
  @SkipIdempotency()
  @ApiOperation({
    summary: 'Upload a file of subscribers, services or opening balances to import',
    description:
      'Takes a CSV (text/csv, RFC 4180, UTF-8, a header of the columns: docs/imports.md) or JSON Lines (application/x-ndjson or application/jsonl: one create body per line) file of up to 50 MB, as the body or as the `file` part of multipart/form-data (with the form fields kind, dry_run and format before it), stores its rows and answers 202 with the job; a worker imports them in batches in the background (poll GET /imports/{id}, or listen for `import.completed`). `kind` says what the rows are: `subscribers` (each row checked by the rules of POST /subscribers and matched by its external_id: a known one updates that subscriber as PATCH would, or leaves it unchanged; any other creates one), `services` (the body of POST /subscribers/{id}/services with the subscriber named by `subscriber_external_id`, the plan by `plan_id` or `plan_name`, and an `external_id` of the service, which rows are matched by; needs provisioning:write) or `opening_balances` (one per subscriber and currency: `subscriber_external_id`, a signed `amount`, `currency`; posted as a debit invoiced at once or a credit; needs billing:write). Records are made by the same code as their API operations, with the same events and provisioning orders; a file imported twice creates nothing new. Refused rows are listed at /imports/{id}/errors. 400 `invalid_import_file` when the file is not UTF-8, not CSV, has an unknown column or passes a limit (100 columns, 10,000 characters a field); 413 past 50 MB; 415 for another media type.',
  })
  @ApiBody({
    required: true,
    schema: FILE_SCHEMA,
    description:
      'The file: CSV or JSON Lines, UTF-8 (a BOM is dropped). As multipart/form-data: a `file` part, with kind, dry_run and format as form fields before it.',
  })
  @ApiRequestContent(UPLOAD_CONTENT)
  @ApiEnvelope(ImportDto, { status: 202 })
  @ApiErrors(
    ...AUTH_ERRORS,
    'invalid_import_file',
    'missing_field',
    'unknown_field',
    'validation_failed',
    'payload_too_large',
    'unsupported_media_type',
  )
  createImport(
    @Auth() auth: AuthContext,
    @Query() query: CreateImportQueryDto,
    @UploadedRequest() req: Request,
  ): Promise<ImportDto> {
    return this.imports.create(auth, query, req);
  }

  @Get()
  @RequireScopes('subscribers:read')
  @ApiOperation({
    summary: 'List imports, newest first',
    description: "Lists the tenant's imports with their status and figures, paginated by cursor. Read-only.",
  })
  @ApiEnvelope(ImportDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listImports(
    @Auth() auth: AuthContext,
    @Query() query: ListImportsQueryDto,
  ): Promise<Page<ImportDto>> {
    return (await this.imports.list(auth.tenantId, query)).map((job) => ImportDto.from(job));
  }

  @Get(':id/errors')
  @RequireScopes('subscribers:read')
  @ApiOperation({
    summary: "An import's refused rows",
    description:
      'Lists the rows an import refused, in row order, paginated by cursor: the row number, its key (external_id), the field at fault, the error code the same body would get from the API operation that makes its record, and why (a row of opening balances is named by its subscriber_external_id). 404 `not_found` for an unknown import.',
  })
  @ApiEnvelope(ImportErrorDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'invalid_query', 'invalid_cursor')
  async listImportErrors(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<ImportErrorDto>> {
    return (await this.imports.errors(auth.tenantId, id, query)).map((error) => ImportErrorDto.from(error));
  }

  @Get(':id')
  @RequireScopes('subscribers:read')
  @ApiOperation({
    summary: 'Get an import with its progress',
    description:
      'Returns one import: its status (queued, running, completed, failed), rows total and done, and how many were created, updated, unchanged and refused. Poll it after POST /imports.',
  })
  @ApiEnvelope(ImportDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getImport(@Auth() auth: AuthContext, @Param('id') id: string): Promise<ImportDto> {
    return ImportDto.from(await this.imports.get(auth.tenantId, id));
  }
}
