import { DECORATORS } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import type { MetadataStorage } from 'class-validator';

/** One validator's record, read off the public MetadataStorage (its own file is not exported). */
type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

/**
 * The limits and formats the validation layer enforces, written into the document from class-validator's own
 * metadata (so the document cannot drift from what the server checks): run once before SwaggerModule.createDocument.
 * A value an @ApiProperty states itself wins; only what it left unsaid is filled in.
 */
type SchemaPatch = Record<string, unknown>;

/** Schema keywords a validator implies. Unknown validators imply nothing. */
function implied(rule: ValidationMetadata): SchemaPatch {
  const [first, second] = (rule.constraints ?? []) as unknown[];
  switch (rule.name ?? '') {
    case 'maxLength':
      return { maxLength: first };
    case 'minLength':
      return { minLength: first };
    case 'isLength':
      return { minLength: first, ...(typeof second === 'number' ? { maxLength: second } : {}) };
    case 'isNotBlank':
      return { minLength: 1 };
    case 'matches':
      return first instanceof RegExp ? { pattern: first.source } : {};
    case 'isEmail':
      return { format: 'email' };
    case 'isUrl':
      return { format: 'uri' };
    case 'isDateString':
    case 'isTimestamp':
      return { format: 'date-time' };
    case 'isDateOnly':
      return { format: 'date' };
    case 'isCurrency':
      return { pattern: '^[A-Z]{3}$', maxLength: 3, description: 'An ISO 4217 currency code in upper case.' };
    case 'isUnicastIpv4':
    case 'isNasIpv4':
      return { format: 'ipv4' };
    case 'isMacAddress':
      return {
        pattern:
          '^(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^(?:[0-9A-Fa-f]{4}\\.){2}[0-9A-Fa-f]{4}$|^[0-9A-Fa-f]{12}$',
        maxLength: 17,
      };
    case 'arrayMaxSize':
      return { maxItems: first };
    case 'arrayMinSize':
      return { minItems: first };
    case 'max':
      return { maximum: first };
    case 'min':
      return { minimum: first };
    default:
      return {};
  }
}

let applied = false;

export function applyValidationConstraints(): void {
  if (applied) {
    return; // the metadata is per class, shared by every document built in this process
  }
  applied = true;
  const storage = getMetadataStorage() as unknown as {
    validationMetadatas: Map<object, ValidationMetadata[]>;
  };
  for (const [target, rules] of storage.validationMetadatas) {
    for (const rule of rules) {
      const patch = implied(rule);
      if (Object.keys(patch).length === 0 || rule.each) {
        continue;
      }
      const prototype = (target as { prototype?: object }).prototype;
      if (!prototype) {
        continue;
      }
      const key = rule.propertyName;
      const current = Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, prototype, key) as
        Record<string, unknown> | undefined;
      if (!current) {
        continue; // a property the document does not show
      }
      const additions = Object.fromEntries(
        Object.entries(patch).filter(([name, value]) => value !== undefined && current[name] === undefined),
      );
      if (Object.keys(additions).length > 0) {
        Reflect.defineMetadata(DECORATORS.API_MODEL_PROPERTIES, { ...current, ...additions }, prototype, key);
      }
    }
  }
}
