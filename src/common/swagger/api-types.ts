import type { Type } from '@nestjs/common';
import { ApiBody, ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { METADATA_LIMITS } from '../validation/is-metadata';
import { MAX_AMOUNT } from '../money';

/**
 * Schema helpers for the property kinds @nestjs/swagger gets wrong by default (a TypeScript `number` becomes
 * `type: number`, a `Record` a bare `type: object`), so generated clients get integers and typed maps.
 */
type Options = ApiPropertyOptions & { required?: boolean };

/** A whole number (quantity, a count, days, a status code): `type: integer`. */
export function ApiInteger(options: Options = {}) {
  return ApiProperty({ type: 'integer', format: 'int32', ...options });
}

/** A count of bytes (RADIUS octets with their gigawords): a bigint in the database, beyond int32 within a day. */
export function ApiByteCount(options: Options = {}) {
  return ApiProperty({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    ...options,
  });
}

/**
 * An amount of money in integer minor units: `int64` up to MAX_AMOUNT (what the API accepts and stores).
 * `signed` for balances and ledger amounts, which may be negative.
 */
export function ApiMoney(options: Options & { signed?: boolean } = {}) {
  const { signed, ...rest } = options;
  return ApiProperty({
    type: 'integer',
    format: 'int64',
    maximum: MAX_AMOUNT,
    minimum: signed ? -MAX_AMOUNT : 0,
    ...rest,
  });
}

/** The value schema of metadata: what is-metadata accepts (a null deletes the key on PATCH). */
export const METADATA_VALUE_SCHEMA = {
  anyOf: [
    { type: 'string', maxLength: METADATA_LIMITS.maxStringLength, nullable: true },
    { type: 'number', nullable: true },
    { type: 'boolean', nullable: true },
  ],
};

/** Flat key/value metadata: string, number, boolean or null values, within METADATA_LIMITS. */
export function ApiMetadata(options: Options = {}) {
  return ApiProperty({
    type: 'object',
    additionalProperties: METADATA_VALUE_SCHEMA,
    maxProperties: METADATA_LIMITS.maxKeys,
    description:
      `Flat key/value pairs: at most ${METADATA_LIMITS.maxKeys} keys of up to ${METADATA_LIMITS.maxKeyLength} ` +
      `characters; values are strings (up to ${METADATA_LIMITS.maxStringLength}), numbers, booleans or null.`,
    ...options,
  } as ApiPropertyOptions);
}

/** A map of string values (links, health checks). */
export function ApiStringMap(options: Options = {}) {
  return ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    ...options,
  } as ApiPropertyOptions);
}

/**
 * The body Try-it-out starts from. Run in the order of the README on a fresh server, each succeeds as is, but for
 * the ids of records it refers to (a subscriber, a transaction), which only an earlier call can give.
 */
export function ApiExampleBody(type: Type<unknown>, example: object) {
  return ApiBody({
    type,
    examples: { default: { summary: 'A first call on a fresh server', value: example } },
  });
}
