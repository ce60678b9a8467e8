import { ValidationOptions } from 'class-validator';
import { ValidateValue, ValueProblem } from './value-problem';

export const METADATA_LIMITS = { maxKeys: 50, maxKeyLength: 40, maxStringLength: 500 };

/**
 * Why a metadata object breaks the limits, at which key, or null when it is fine. Null values are allowed (they
 * delete on PATCH).
 */
export function metadataProblem(value: unknown, property = 'metadata'): ValueProblem | null {
  const at = (path: string, message: string): ValueProblem => ({ path, message });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return at('', `${property} must be an object`);
  }
  const entries = Object.entries(value);
  if (entries.length > METADATA_LIMITS.maxKeys) {
    return at('', `${property} may hold at most ${METADATA_LIMITS.maxKeys} keys`);
  }
  for (const [key, item] of entries) {
    if (key.length === 0 || key.length > METADATA_LIMITS.maxKeyLength) {
      return at(key, `${property} keys must be 1 to ${METADATA_LIMITS.maxKeyLength} characters`);
    }
    if (typeof item === 'string' && item.length > METADATA_LIMITS.maxStringLength) {
      return at(key, `${property}.${key} may be at most ${METADATA_LIMITS.maxStringLength} characters`);
    }
    if (item !== null && !['string', 'number', 'boolean'].includes(typeof item)) {
      return at(key, `${property}.${key} must be a string, number, boolean or null`);
    }
  }
  return null;
}

/** Flat key/value metadata within METADATA_LIMITS; a failure names the offending key (`metadata.plan`). */
export function IsMetadata(options?: ValidationOptions) {
  return ValidateValue('isMetadata', metadataProblem, options);
}
