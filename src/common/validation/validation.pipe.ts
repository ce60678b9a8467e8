import { ArgumentMetadata, Injectable, PipeTransform, ValidationError } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { ApiError } from '../errors/api-error';
import { problemAt } from './value-problem';

interface Flattened {
  /** The dotted path of the property, e.g. `address.city` or `allocations.0.amount`. */
  field: string;
  property: string;
  value: unknown;
  constraints: Record<string, string>;
}

function flatten(errors: ValidationError[], parent = ''): Flattened[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own: Flattened[] = error.constraints
      ? [{ field, property: error.property, value: error.value, constraints: error.constraints }]
      : [];
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** Constraints that check a value's type: when one fails, its message is the one to give ("x must be a string"). */
const TYPE_CONSTRAINTS = new Set(['isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isObject']);

/** Which failed constraint speaks for a field: a wrong type first, then blank text, then a format, then a bound. */
function rank(name: string): number {
  if (TYPE_CONSTRAINTS.has(name)) {
    return 0;
  }
  if (name === 'isNotBlank') {
    return 1;
  }
  return name.startsWith('is') ? 2 : 3;
}

/**
 * The field and message of a failure: the path inside the value when the validator names one (metadata.plan,
 * events.2), and a message that starts with the full dotted path (class-validator names the bare property).
 */
function failureOf(error: Flattened): { field: string; message: string } {
  const [name, message] = Object.entries(error.constraints).sort(([a], [b]) => rank(a) - rank(b))[0];
  const problem = problemAt(name, error.value, error.property);
  const field = problem?.path ? `${error.field}.${problem.path}` : error.field;
  const rest = message.slice(error.property.length);
  const named = message.startsWith(error.property) && /^[ .]/.test(rest);
  return { field, message: named ? `${error.field}${rest}` : message };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Keys no DTO has and class-transformer mistakes for the object's own machinery. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** What makes a value unstorable or unsafe to map, and where (a dotted path). */
interface TextProblem {
  path: string;
  kind: 'nul' | 'surrogate' | 'reserved';
}

/**
 * The first string (value or key) Postgres cannot store (U+0000, or a lone UTF-16 surrogate, which JSON may escape
 * but no Unicode text holds) or the first reserved key, or null.
 */
function textProblem(value: unknown, path: string): TextProblem | null {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) {
      return { path, kind: 'nul' };
    }
    return LONE_SURROGATE.test(value) ? { path, kind: 'surrogate' } : null;
  }
  if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (RESERVED_KEYS.has(key)) {
        return { path: at, kind: 'reserved' };
      }
      const found = textProblem(key, at) ?? textProblem(inner, at);
      if (found !== null) {
        return found;
      }
    }
  }
  return null;
}

const PROBLEMS: Record<TextProblem['kind'], string> = {
  nul: 'Text may not contain NUL characters.',
  surrogate: 'Text must be Unicode: a lone UTF-16 surrogate (an unpaired \\ud800–\\udfff escape) is not.',
  reserved: '__proto__, constructor and prototype are not fields of this API.',
};

function rejectUnstorableText(value: unknown, metadata: ArgumentMetadata): void {
  const problem = textProblem(value, '');
  if (problem === null) {
    return;
  }
  const field = problem.path || null;
  if (metadata.type === 'param') {
    throw new ApiError('not_found', 'No record has this id.');
  }
  if (metadata.type === 'query') {
    throw new ApiError('invalid_query', PROBLEMS[problem.kind], field);
  }
  if (problem.kind === 'reserved') {
    throw new ApiError('unknown_field', PROBLEMS[problem.kind], field);
  }
  throw new ApiError('validation_failed', PROBLEMS[problem.kind], field);
}

/**
 * The one validation pipe. Bodies and queries are checked against their DTO class, and failures are sorted
 * by DESIGN §2: an unknown or absent field is the request's shape (400), a wrong value is 422.
 */
@Injectable()
export class ApiValidationPipe implements PipeTransform {
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // A custom parameter (the caller's AuthContext) is the app's own value, not input.
    if (metadata.type === 'custom') {
      return value;
    }
    rejectUnstorableText(value, metadata);
    const metatype = metadata.metatype;
    if (!metatype || [String, Number, Boolean, Array, Object].includes(metatype as never)) {
      return value;
    }
    const isQuery = metadata.type === 'query';
    if (metadata.type === 'body' && !isPlainObject(value)) {
      throw new ApiError('invalid_json', 'The request body must be a JSON object.');
    }
    const instance = plainToInstance(metatype as new () => object, value ?? {}, {
      exposeDefaultValues: true,
    });
    const errors = flatten(await validate(instance, { whitelist: true, forbidNonWhitelisted: true }));
    if (errors.length === 0) {
      return instance;
    }

    const unknown = errors.find((e) => 'whitelistValidation' in e.constraints);
    if (unknown) {
      throw new ApiError(
        isQuery ? 'invalid_query' : 'unknown_field',
        isQuery ? `Unknown query parameter ${unknown.field}.` : `Unknown field ${unknown.field}.`,
        unknown.field,
      );
    }
    // class-validator skips optional properties when absent, so an absent value here is a required one.
    const missing = errors.find((e) => e.value === undefined || e.value === null);
    if (missing && !isQuery) {
      throw new ApiError('missing_field', `${missing.field} is required.`, missing.field);
    }
    const { field, message } = failureOf(errors[0]);
    throw new ApiError(isQuery ? 'invalid_query' : 'validation_failed', message, field);
  }
}
