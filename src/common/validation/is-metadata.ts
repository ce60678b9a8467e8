import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';

export const METADATA_LIMITS = { maxKeys: 50, maxKeyLength: 40, maxStringLength: 500 };

/** Why a metadata object breaks the limits, or null when it is fine. Null values are allowed (they delete on PATCH). */
export function metadataProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'metadata must be an object';
  const entries = Object.entries(value);
  if (entries.length > METADATA_LIMITS.maxKeys)
    return `metadata may hold at most ${METADATA_LIMITS.maxKeys} keys`;
  for (const [key, item] of entries) {
    if (key.length === 0 || key.length > METADATA_LIMITS.maxKeyLength) {
      return `metadata keys must be 1 to ${METADATA_LIMITS.maxKeyLength} characters`;
    }
    if (typeof item === 'string' && item.length > METADATA_LIMITS.maxStringLength) {
      return `metadata.${key} may be at most ${METADATA_LIMITS.maxStringLength} characters`;
    }
    if (item !== null && !['string', 'number', 'boolean'].includes(typeof item)) {
      return `metadata.${key} must be a string, number, boolean or null`;
    }
  }
  return null;
}

/** Flat key/value metadata within METADATA_LIMITS. */
export function IsMetadata(options?: ValidationOptions) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isMetadata',
      target: object.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown) => metadataProblem(value) === null,
        defaultMessage: (args: ValidationArguments) => metadataProblem(args.value) ?? 'metadata is invalid',
      },
    });
}
