import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse, getSchemaPath, ApiSchema } from '@nestjs/swagger';
import { ERROR_CATALOG, ErrorCode } from '../errors/error-catalog';
import { ApiInteger } from './api-types';

@ApiSchema({ description: 'Where a page of a list ends, and how to ask for the next one.' })
export class PaginationDto {
  @ApiInteger({
    example: 20,
    minimum: 1,
    maximum: 100,
    description: 'The page size used (the `limit` asked for).',
  })
  limit: number;

  @ApiProperty({
    example: true,
    description: 'true: more records follow; ask with `starting_after=<next_cursor>`.',
  })
  has_more: boolean;

  @ApiProperty({
    nullable: true,
    type: String,
    example: 'WyIyMDI2LTExLTIxVDEwOjAwOjAwLjAwMFoiLCJzdWJfMDEiXQ',
    description: 'Opaque: send it as `starting_after` for the next page; null on the last page.',
  })
  next_cursor: string | null;
}

@ApiSchema({ description: 'What every answer carries besides its data: the request id and the API version.' })
export class MetaDto {
  @ApiProperty({
    example: 'req_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: "This request's id, also in the X-Request-ID header: quote it to support.",
  })
  request_id: string;

  @ApiProperty({ example: 'v1', description: 'The API version that answered.' })
  api_version: string;
}

/** The meta of a list: the page it is. Only lists carry `pagination`. */
@ApiSchema({ description: 'The meta of a list answer: the request id, the API version and the page.' })
export class ListMetaDto extends MetaDto {
  @ApiProperty({ type: PaginationDto })
  pagination: PaginationDto;
}

/** One failure of a request that failed several checks. */
@ApiSchema({ description: 'One of several problems of a request: its code, message and field.' })
export class ErrorDetailDto {
  @ApiProperty({
    enum: Object.keys(ERROR_CATALOG),
    example: 'missing_field',
    description: 'What is wrong with this field, from the error catalog (docs/errors.md).',
  })
  code: string;

  @ApiProperty({ example: 'full_name is required.' })
  message: string;

  @ApiProperty({
    nullable: true,
    type: String,
    example: 'full_name',
    description: 'Dotted path of the offending field.',
  })
  field: string | null;
}

@ApiSchema({
  description: 'What went wrong: a catalogued code, a message for people, and the field at fault.',
})
export class ErrorBodyDto {
  @ApiProperty({
    enum: Object.keys(ERROR_CATALOG),
    example: 'validation_failed',
    description: 'Stable, machine-readable: branch on it, not on `message` (every code in docs/errors.md).',
  })
  code: string;

  @ApiProperty({ example: 'email must be an email' })
  message: string;

  @ApiProperty({
    nullable: true,
    type: String,
    example: 'email',
    description: 'Dotted path of the offending field.',
  })
  field: string | null;

  @ApiProperty({
    type: [ErrorDetailDto],
    required: false,
    minItems: 1,
    description:
      'Present on validation failures (missing_field, unknown_field, validation_failed, invalid_query) and only ' +
      "there: every failed field, the first being error's own code, message and field. Absent on other errors.",
  })
  details?: ErrorDetailDto[];
}

@ApiSchema({ description: 'Every failure answer: `{success: false, error, meta}`.' })
export class ErrorEnvelopeDto {
  @ApiProperty({ type: 'boolean', enum: [false], example: false, description: 'Always false on a failure.' })
  success: false;

  @ApiProperty({ type: ErrorBodyDto })
  error: ErrorBodyDto;

  @ApiProperty({ type: MetaDto })
  meta: MetaDto;
}

/**
 * Documents a success answer: the success envelope (`{success: true, data, meta}`, src/common/envelope/envelope.ts)
 * around `model` (or an array of it, for lists). `list: 'whole'` is a list answered in one piece (a short fixed
 * catalog), whose meta has no pagination.
 */
export function ApiEnvelope(
  model: Type<unknown>,
  options: { status?: number; list?: boolean | 'whole'; description?: string } = {},
) {
  const data = options.list
    ? { type: 'array', items: { $ref: getSchemaPath(model) } }
    : { $ref: getSchemaPath(model) };
  const meta = options.list === true ? ListMetaDto : MetaDto;
  return applyDecorators(
    ApiExtraModels(model, meta, PaginationDto),
    ApiResponse({
      status: options.status ?? 200,
      description: options.description ?? 'Success',
      schema: {
        type: 'object',
        required: ['success', 'data', 'meta'],
        properties: {
          success: { type: 'boolean', enum: [true], example: true },
          data,
          meta: { $ref: getSchemaPath(meta) },
        },
      },
    }),
  );
}

/** Documents the error answers of an endpoint, one example per code, grouped by status. */
export function ApiErrors(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of ['rate_limited', 'internal_error', ...codes] as ErrorCode[]) {
    const status = ERROR_CATALOG[code].status;
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  const responses = [...byStatus.entries()].map(([status, statusCodes]) =>
    ApiResponse({
      status,
      description: statusCodes.map((code) => `\`${code}\`: ${ERROR_CATALOG[code].description}`).join('<br>'),
      content: {
        'application/json': {
          schema: { $ref: getSchemaPath(ErrorEnvelopeDto) },
          examples: Object.fromEntries(
            statusCodes.map((code) => [
              code,
              {
                value: {
                  success: false,
                  error: { code, message: ERROR_CATALOG[code].description, field: null },
                  meta: { request_id: 'req_01JD3Z6W3R4T5Y6U7I8O9P0QAB', api_version: 'v1' },
                },
              },
            ]),
          ),
        },
      },
    }),
  );
  return applyDecorators(ApiExtraModels(ErrorEnvelopeDto, ErrorBodyDto, MetaDto), ...responses);
}

/** The errors every authenticated endpoint can answer. */
export const AUTH_ERRORS: ErrorCode[] = [
  'authentication_required',
  'invalid_token',
  'insufficient_scope',
  'tenant_forbidden',
  'abuse_blocked',
];

/** The errors of every endpoint that takes a JSON body. */
export const BODY_ERRORS: ErrorCode[] = [
  'invalid_json',
  'missing_field',
  'unknown_field',
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
];

/** The errors a POST can answer about its X-Idempotency-Key. */
export const IDEMPOTENCY_ERRORS: ErrorCode[] = [
  'invalid_idempotency_key',
  'idempotency_key_reused',
  'idempotency_request_in_progress',
];
