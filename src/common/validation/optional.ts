import { applyDecorators } from '@nestjs/common';
import { getMetadataStorage, registerDecorator, ValidateIf, ValidationTypes } from 'class-validator';

/**
 * An optional field: it may be left out, and then no other check runs. `null` is not "left out": it is checked like
 * any value and refused ("x must not be null", 422). Use it instead of class-validator's IsOptional, which lets
 * `null` through to services that test `!== undefined` (issue 27, item 4).
 */
export function Optional(): PropertyDecorator {
  return applyDecorators(
    ValidateIf((_object: object, value: unknown) => value !== undefined),
    (object: object, propertyName: string | symbol) =>
      registerDecorator({
        name: 'isNotNull',
        target: object.constructor,
        propertyName: String(propertyName),
        options: { message: `${String(propertyName)} must not be null` },
        validator: { validate: (value: unknown) => value !== null },
      }),
  );
}

/**
 * An optional field where `null` means "clear it" (PATCH) or "none" (e.g. auto_suspend_after_days): left out or null,
 * no other check runs. Its ApiProperty must say `nullable: true` (dto-nullability.spec.ts checks the two agree).
 */
export function OptionalNullable(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined && value !== null);
}

const optionalCache = new WeakMap<object, Set<string>>();

/**
 * Whether `property` of the class of `target` is optional: it carries a conditional check (Optional,
 * OptionalNullable, a ValidateIf of its own, or the one PartialType adds), so it may be left out.
 */
export function isOptionalProperty(target: object | undefined, property: string): boolean {
  const type = target?.constructor;
  if (!type) {
    return false;
  }
  let optional = optionalCache.get(type);
  if (!optional) {
    optional = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(type, '', true, false)
        .filter((metadata) => metadata.type === ValidationTypes.CONDITIONAL_VALIDATION)
        .map((metadata) => metadata.propertyName),
    );
    optionalCache.set(type, optional);
  }
  return optional.has(property);
}
