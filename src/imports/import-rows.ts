import type { ArgumentMetadata } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error';
import type { ErrorCode } from '../common/errors/error-catalog';
import { jsonDeeperThan, MAX_JSON_DEPTH } from '../common/http/json-body.guard';
import { ApiValidationPipe } from '../common/validation/validation.pipe';
import { ImportOpeningBalanceDto } from '../billing';
import { ImportServiceDto } from '../provisioning';
import { CreateSubscriberDto } from '../subscribers';
import { ImportKind, type RowProblem } from './import.entity';

/** What a kind's rows are: the body class they are validated against, and the CSV columns it reads. */
interface KindSpec {
  dto: new () => object;
  /** The field every row must have, which the import matches rows by (and the refused rows list as external_id). */
  key: string;
  /** The CSV header names: a field of the body, or `parent.child` for a nested one. */
  columns: readonly string[];
  /** `metadata.<key>` columns: one key of the metadata object each. */
  prefixes: readonly string[];
  /** Columns whose cells are booleans (`true`/`false`; anything else is left as text for the DTO to refuse). */
  booleans: ReadonlySet<string>;
  /** Columns whose cells are integers (an optional sign and digits; anything else is left as text to refuse). */
  integers: ReadonlySet<string>;
}

export const KINDS: Record<ImportKind, KindSpec> = {
  [ImportKind.Subscribers]: {
    dto: CreateSubscriberDto,
    columns: [
      'external_id',
      'full_name',
      'email',
      'phone',
      'status',
      'billing_profile_id',
      'address.line1',
      'address.city',
      'address.state',
      'address.postal_code',
      'tax_exempt',
      'tax_exempt_reason',
      'tax_id',
    ],
    key: 'external_id',
    prefixes: ['metadata.'],
    booleans: new Set(['tax_exempt']),
    integers: new Set(),
  },
  [ImportKind.Services]: {
    dto: ImportServiceDto,
    columns: [
      'external_id',
      'subscriber_external_id',
      'plan_id',
      'plan_name',
      'pppoe_username',
      'pppoe_password',
      'static_ipv4',
      'cpe_mac',
      'installation_address',
    ],
    key: 'external_id',
    prefixes: [],
    booleans: new Set(),
    integers: new Set(),
  },
  [ImportKind.OpeningBalances]: {
    dto: ImportOpeningBalanceDto,
    columns: ['subscriber_external_id', 'amount', 'currency', 'description', 'date'],
    key: 'subscriber_external_id',
    prefixes: [],
    booleans: new Set(),
    integers: new Set(['amount']),
  },
};

/** A row's key (KindSpec.key) as the refused rows list it, or null. */
export function rowKey(kind: ImportKind, data: Record<string, unknown> | null): string | null {
  const value = data?.[KINDS[kind].key];
  return typeof value === 'string' ? value.slice(0, 200) : null;
}

/** Limits of an upload, so that no file costs more than its size: a CSV "bomb" of columns, a huge field or line. */
export const UPLOAD_LIMITS = {
  maxBytes: 50 * 1000 * 1000,
  maxColumns: 100,
  maxFieldLength: 10_000,
  maxLineLength: 100_000,
};

/** A row as stored for the worker: its body, or the code and message of why it could not be read. */
export interface StoredRow {
  row: number;
  data: Record<string, unknown> | null;
  problem: RowProblem | null;
}

function refusedRow(row: number, code: ErrorCode, field: string | null, message: string): StoredRow {
  return { row, data: null, problem: { code, field, message } };
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The path of the first text (key or value) Postgres cannot store in jsonb: a NUL, a lone surrogate; or null. */
function unstorableAt(value: unknown, path: string): string | null {
  if (typeof value === 'string') {
    return value.includes('\u0000') || LONE_SURROGATE.test(value) ? path : null;
  }
  if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      const found = unstorableAt(key, at) ?? unstorableAt(inner, at);
      if (found !== null) {
        return found;
      }
    }
  }
  return null;
}

/** The row to store: its body, or the refusal of a body holding text no database stores (the API refuses it too). */
function stored(row: number, data: Record<string, unknown>): StoredRow {
  const at = unstorableAt(data, '');
  if (at === null) {
    return { row, data, problem: null };
  }
  return refusedRow(
    row,
    'validation_failed',
    at,
    'Text may not contain NUL characters or unpaired UTF-16 surrogates.',
  );
}

/** The header of a CSV upload, checked against the kind's columns: 400 invalid_import_file when it is not one. */
export function checkHeader(kind: ImportKind, header: readonly string[]): string[] {
  const spec = KINDS[kind];
  const names = header.map((name) => name.trim());
  const seen = new Set<string>();
  for (const name of names) {
    const known =
      spec.columns.includes(name) ||
      spec.prefixes.some((prefix) => name.startsWith(prefix) && name.length > prefix.length);
    if (!known) {
      const columns = [...spec.columns, ...spec.prefixes.map((prefix) => `${prefix}<key>`)];
      throw new ApiError(
        'invalid_import_file',
        `Unknown column "${name.slice(0, 100)}" for a ${kind} import; the columns are ${columns.join(', ')}.`,
      );
    }
    if (seen.has(name)) {
      throw new ApiError('invalid_import_file', `The column "${name}" appears twice in the header.`);
    }
    seen.add(name);
  }
  if (!names.includes(spec.key)) {
    throw new ApiError(
      'invalid_import_file',
      `The header has no ${spec.key} column: every imported row is matched by its ${spec.key}.`,
    );
  }
  return names;
}

/** A CSV record as the kind's create body: empty cells left out, `a.b` columns nested, boolean columns typed. */
export function csvRow(
  kind: ImportKind,
  header: readonly string[],
  record: string[],
  row: number,
): StoredRow {
  if (record.length !== header.length) {
    return refusedRow(
      row,
      'validation_failed',
      null,
      `The record has ${record.length} fields; the header has ${header.length}.`,
    );
  }
  const spec = KINDS[kind];
  const data: Record<string, unknown> = {};
  header.forEach((name, index) => {
    const cell = record[index];
    if (cell === '') {
      return;
    }
    const value =
      spec.booleans.has(name) && /^(true|false)$/i.test(cell)
        ? cell.toLowerCase() === 'true'
        : spec.integers.has(name) && /^[+-]?\d+$/.test(cell)
          ? Number(cell)
          : cell;
    const dot = name.indexOf('.');
    if (dot === -1) {
      data[name] = value;
      return;
    }
    const parent = name.slice(0, dot);
    const nested = (data[parent] ?? {}) as Record<string, unknown>;
    nested[name.slice(dot + 1)] = value;
    data[parent] = nested;
  });
  return stored(row, data);
}

/** A JSON Lines line as a body: a JSON object, or the problem (400 invalid_json) the row is refused with. */
export function jsonRow(line: string, row: number): StoredRow {
  const refused = (message: string): StoredRow => refusedRow(row, 'invalid_json', null, message);
  if (jsonDeeperThan(Buffer.from(line, 'utf8'), MAX_JSON_DEPTH)) {
    return refused(`The line nests deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return refused('The line is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return refused('The line must be a JSON object.');
  }
  return stored(row, value as Record<string, unknown>);
}

const PIPE = new ApiValidationPipe();

/**
 * A stored row checked by the rules of the kind's create operation (the same DTO class through the same pipe as the
 * API's body), and an import's own: its key (external_id; an opening balance's subscriber_external_id) is required.
 * Answers the DTO instance or the first failure.
 */
export async function validateRow(
  kind: ImportKind,
  data: Record<string, unknown>,
): Promise<object | ApiError> {
  const metadata: ArgumentMetadata = { type: 'body', metatype: KINDS[kind].dto, data: '' };
  try {
    const { key } = KINDS[kind];
    const dto = (await PIPE.transform(data, metadata)) as Record<string, unknown>;
    if (dto[key] === undefined) {
      return new ApiError('missing_field', `${key} is required in an import: rows are matched by it.`, key);
    }
    return dto;
  } catch (error) {
    if (error instanceof ApiError) {
      return error;
    }
    throw error;
  }
}
