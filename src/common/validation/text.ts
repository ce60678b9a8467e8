import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsString, MaxLength, registerDecorator, ValidationOptions } from 'class-validator';

/**
 * Trims a string before it is validated and stored (non-strings pass untouched, so the type check still answers).
 * For identifiers, emails, phones and names, where surrounding spaces are never meant: `"x1 "` is `"x1"`.
 */
export function Trim(max?: number) {
  return Transform(({ value }: { value: unknown }) =>
    // A value longer than `max` as sent is left as it is, for the length check to refuse: the document's maxLength
    // is of what is sent, and 300 spaces must not pass as "".
    typeof value === 'string' && (max === undefined || value.length <= max) ? value.trim() : value,
  );
}

/** A string holding at least one character that is not white space. */
export function IsNotBlank(options?: ValidationOptions): PropertyDecorator {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isNotBlank',
      target: object.constructor,
      propertyName: String(propertyName),
      options: { message: `${String(propertyName)} must not be blank`, ...options },
      validator: { validate: (value: unknown) => typeof value === 'string' && value.trim().length > 0 },
    });
}

/** An identifier or a name: trimmed, then a string of 1 to `max` characters. */
export function IsTrimmedText(max: number) {
  return applyDecorators(Trim(), IsString(), IsNotBlank(), MaxLength(max));
}

/** Free text, kept verbatim: a string of at most `max` characters; `required` text must not be blank. */
export function IsFreeText(max: number, options: { required?: boolean } = {}) {
  return options.required
    ? applyDecorators(IsString(), IsNotBlank(), MaxLength(max))
    : applyDecorators(IsString(), MaxLength(max));
}
