import { ArgumentMetadata, Injectable, PipeTransform, ValidationError } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { ApiError, type ErrorDetail } from '../errors/api-error';
import { isOptionalProperty } from './optional';
import { problemAt } from './value-problem';

interface Flattened {
  /** The dotted path of the property, e.g. `address.city` or `allocations.0.amount`. */
  field: string;
  property: string;
  value: unknown;
  constraints: Record<string, string>;
  /** The object the property belongs to (the body, or a nested object of it). */
  target: object | undefined;
}

function flatten(errors: ValidationError[], parent = ''): Flattened[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own: Flattened[] = error.constraints
      ? [
          {
            field,
            property: error.property,
            value: error.value,
            constraints: error.constraints,
            target: error.target,
          },
        ]
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

/**
 * Keys no DTO has and class-transformer mistakes for the object's own machinery: it silently drops a metadata key
 * named `valueOf` or `toString`, so they are refused rather than lost.
 */
const RESERVED_KEYS = new Set(['__proto__', 'prototype', ...Object.getOwnPropertyNames(Object.prototype)]);

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
  reserved:
    'Names of the JavaScript object machinery (__proto__, constructor, prototype, valueOf, toString, …) are not ' +
    'fields or keys of this API.',
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
 * The one validation pipe. Bodies and queries are checked against their DTO class, and failures are sorted as the
 * README's "400 vs 422" says: an unknown or absent field is the request's shape (400), a wrong value is 422.
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
    const empty = isQuery ? emptyQueryValues(value, errors) : [];
    if (errors.length === 0 && empty.length === 0) {
      return instance;
    }
    // Every failure, in the order the first is chosen: an unknown field, then a missing one, then a wrong value.
    const details = [...errors.map((error) => detailOf(error, isQuery)), ...empty]
      .sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind))
      .map(({ code, message, field }) => ({ code, message, field }));
    const [first] = details;
    const error = new ApiError(first.code, first.message, first.field);
    error.details = details;
    throw error;
  }
}

/**
 * `?email=` is not "no filter": a parameter sent empty is refused (400 invalid_query) rather than read as absent, which
 * listed every subscriber to a client whose filter value came out blank. A parameter already failing says why itself.
 */
function emptyQueryValues(query: unknown, errors: Flattened[]): (ErrorDetail & { kind: Kind })[] {
  if (!isPlainObject(query)) {
    return [];
  }
  const failing = new Set(errors.map((error) => error.field));
  return Object.entries(query)
    .filter(
      ([name, value]) => !failing.has(name) && (value === '' || (Array.isArray(value) && value.includes(''))),
    )
    .map(([name]) => ({
      kind: 'value' as const,
      code: 'invalid_query' as const,
      message: `${name} must not be empty: leave the parameter out for no filter.`,
      field: name,
    }));
}

type Kind = 'unknown' | 'missing' | 'value';
const ORDER: Kind[] = ['unknown', 'missing', 'value'];

/** What one failed property is: an unknown field (400), a required one absent or null (400), or a wrong value. */
function detailOf(error: Flattened, isQuery: boolean): ErrorDetail & { kind: Kind } {
  if ('whitelistValidation' in error.constraints) {
    return {
      kind: 'unknown',
      code: isQuery ? 'invalid_query' : 'unknown_field',
      message: isQuery ? `Unknown query parameter ${error.field}.` : `Unknown field ${error.field}.`,
      field: error.field,
    };
  }
  const code = isQuery ? 'invalid_query' : 'validation_failed';
  // class-validator skips an optional property when absent (and a nullable one when null): what is left is required.
  const optional = isOptionalProperty(error.target, error.property);
  if (!isQuery && (error.value === undefined || (error.value === null && !optional))) {
    return {
      kind: 'missing',
      code: 'missing_field',
      message: `${error.field} is required.`,
      field: error.field,
    };
  }
  if (error.value === null) {
    return { kind: 'value', code, message: `${error.field} must not be null`, field: error.field };
  }
  return { kind: 'value', code, ...failureOf(error) };
}
