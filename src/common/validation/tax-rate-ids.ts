import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ApiError } from '../errors/api-error';
import { Optional, OptionalNullable } from './optional';
import { ValidateValue, type ValueProblem } from './value-problem';

/**
 * The tax rates a billing profile, a service plan or a charge names (`tax_rate_ids`, issue 29 item 2). Shared by
 * billing's and provisioning's DTOs: the shape is checked here by the DTO, what the ids name by `taxRateIdsError` once
 * billing read them (TaxRatesService.assertApplicable; provisioning's plans get it from billing at start-up).
 */

/** The most rates one invoice line is taxed at. */
export const MAX_TAX_RATES = 3;

/** A tax rate id as newId makes them, at most this long. */
const MAX_ID_LENGTH = 64;

/** The list's schema in the document (the caller adds nullable, required and the description). */
export const TAX_RATE_IDS_SCHEMA = {
  type: 'array',
  items: { type: 'string', maxLength: MAX_ID_LENGTH },
  maxItems: MAX_TAX_RATES,
  uniqueItems: true,
  example: ['txr_01JD3Z6W3R4T5Y6U7I8O9P0QAB'],
} as const;

/** Why a tax_rate_ids list is refused, at which item, or null: at most 3 distinct non-empty strings. */
export function taxRateIdsProblem(value: unknown, property = 'tax_rate_ids'): ValueProblem | null {
  if (!Array.isArray(value)) {
    return { path: '', message: `${property} must be an array of tax rate ids` };
  }
  if (value.length > MAX_TAX_RATES) {
    return { path: '', message: `${property} may name at most ${MAX_TAX_RATES} tax rates` };
  }
  for (const [index, id] of value.entries()) {
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) {
      return { path: String(index), message: `${property}.${index} must be a tax rate id` };
    }
    if (value.indexOf(id) !== index) {
      return { path: String(index), message: `${property}.${index} names ${id} a second time` };
    }
  }
  return null;
}

/**
 * A request's `tax_rate_ids`: optional; with `nullable`, null is a value of its own (the profile's rates), so it is
 * let through to the service.
 */
export function TaxRateIdsProperty(options: { nullable: boolean; description: string }): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      ...TAX_RATE_IDS_SCHEMA,
      required: false,
      nullable: options.nullable,
      description: `${options.description} At most ${MAX_TAX_RATES} distinct active rates of the tenant, all inclusive or all exclusive.`,
    }),
    options.nullable ? OptionalNullable() : Optional(),
    (target: object, key: string | symbol) =>
      ValidateValue('isTaxRateIds', taxRateIdsProblem)(target, String(key)),
  );
}

/** What the tenant's `tax_rates` answer for a list's ids (read by billing's TaxRatesRepository). */
export interface TaxRateRef {
  id: string;
  active: boolean;
  inclusive: boolean;
}

/**
 * Whether the rates a list names may be applied together, or the error to answer: 422 invalid_reference at
 * `field.N` for an id that is no active rate of the tenant, 422 validation_failed at `field` when the list mixes
 * inclusive and exclusive rates (a price either includes its taxes or it does not).
 */
export function taxRateIdsError(
  ids: readonly string[],
  found: readonly TaxRateRef[],
  field = 'tax_rate_ids',
): ApiError | null {
  const byId = new Map(found.map((rate) => [rate.id, rate]));
  for (const [index, id] of ids.entries()) {
    const rate = byId.get(id);
    if (!rate || !rate.active) {
      return new ApiError(
        'invalid_reference',
        rate ? `Tax rate ${id} is archived.` : `No tax rate ${id} exists.`,
        `${field}.${index}`,
      );
    }
  }
  const inclusive = new Set(ids.map((id) => byId.get(id)!.inclusive));
  if (inclusive.size > 1) {
    return new ApiError(
      'validation_failed',
      `${field} mixes inclusive and exclusive tax rates: a line's rates are all inclusive or all exclusive.`,
      field,
    );
  }
  return null;
}
