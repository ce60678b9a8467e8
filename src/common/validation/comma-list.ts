import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationArguments } from 'class-validator';
import { Optional } from './optional';

/**
 * `a,b` and `x=a&x=b` both mean "any of": one list of trimmed values, duplicates dropped. An empty item stays, for the
 * check to refuse; anything but strings is left as sent, for the check to refuse too.
 */
export function CommaList(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => {
    const parts = Array.isArray(value) ? value : [value];
    return parts.every((part) => typeof part === 'string')
      ? [...new Set(parts.flatMap((part) => part.split(',')).map((part) => part.trim()))]
      : value;
  });
}

/** Why `value` is not a list of `allowed` values, naming the first bad item; null when it is one. */
export function commaListProblem(name: string, value: unknown, allowed: readonly string[]): string | null {
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === 'string')) {
    return `${name} must be one or more of ${allowed.join(', ')}, comma-separated`;
  }
  if (value.includes('')) {
    return `${name} has an empty item: write values separated by single commas (e.g. ${allowed.slice(0, 2).join(',')})`;
  }
  const bad = value.find((item) => !allowed.includes(item));
  if (bad !== undefined) {
    const shown = bad.length > 40 ? `${bad.slice(0, 40)}…` : bad;
    return `${name} has "${shown}", which is not one of ${allowed.join(', ')}`;
  }
  return null;
}

/** A list whose every item is one of `allowed` (after CommaList). */
export function IsOneOrMoreOf(allowed: readonly string[]): PropertyDecorator {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isOneOrMoreOf',
      target: object.constructor,
      propertyName: String(propertyName),
      options: {
        message: (args: ValidationArguments) =>
          commaListProblem(args.property, args.value, allowed) ?? `${args.property} is invalid`,
      },
      validator: {
        validate: (value: unknown) => commaListProblem(String(propertyName), value, allowed) === null,
      },
    });
}

/** A list (after CommaList) whose every item matches `pattern`; `what` says what an item must be. */
export function IsEachMatching(pattern: RegExp, what: string): PropertyDecorator {
  const problem = (name: string, value: unknown): string | null => {
    if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === 'string')) {
      return `${name} must be ${what}, or several comma-separated`;
    }
    if (value.includes('')) {
      return `${name} has an empty item: write values separated by single commas`;
    }
    const bad = value.find((item) => item.length > 100 || !pattern.test(item));
    return bad === undefined ? null : `${name} has "${bad.slice(0, 40)}", which is not ${what}`;
  };
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isEachMatching',
      target: object.constructor,
      propertyName: String(propertyName),
      options: {
        message: (args: ValidationArguments) =>
          problem(args.property, args.value) ?? `${args.property} is invalid`,
      },
      validator: { validate: (value: unknown) => problem(String(propertyName), value) === null },
    });
}

/**
 * An optional enum filter of a list that takes several values, `status=open,partially_paid` (any of them): documented
 * as an array of the enum (the document says comma-separated, `style: form, explode: false`, for every array query
 * parameter), parsed by CommaList, each item checked.
 */
export function OneOrMoreOf(
  allowed: readonly string[],
  options: { description?: string; example?: string[] } = {},
): PropertyDecorator {
  const what = options.description ? `${options.description} ` : '';
  return applyDecorators(
    ApiPropertyOptional({
      isArray: true,
      enum: [...allowed],
      description: `${what}One or several of ${allowed.join(', ')}, comma-separated (any of them).`,
      example: options.example ?? allowed.slice(0, 2),
    }),
    Optional(),
    CommaList(),
    IsOneOrMoreOf(allowed),
  );
}
