import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';

/**
 * What is wrong with a value and where: `path` is relative to the validated property ('' for the property itself,
 * `plan` inside metadata, `2` in an array); `message` names the full path from the property, e.g. `metadata.plan …`.
 */
export interface ValueProblem {
  path: string;
  message: string;
}

/** Finds the first problem of a value, or null when it is valid. */
export type ProblemFinder = (value: unknown, property: string) => ValueProblem | null;

const finders = new Map<string, ProblemFinder>();

/**
 * A validator that can point inside its value (a metadata key, an array item). class-validator reports a failure on
 * the property only; the validation pipe asks problemAt for the inner path and reports it as `error.field`.
 */
export function ValidateValue(name: string, find: ProblemFinder, options?: ValidationOptions) {
  finders.set(name, find);
  return (object: object, propertyName: string) =>
    registerDecorator({
      name,
      target: object.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown) => find(value, propertyName) === null,
        defaultMessage: (args?: ValidationArguments) =>
          find(args?.value, propertyName)?.message ?? `${propertyName} is invalid`,
      },
    });
}

/** The problem a failed constraint `name` found in `value`, when that constraint is a ValidateValue one. */
export function problemAt(name: string, value: unknown, property: string): ValueProblem | null {
  return finders.get(name)?.(value, property) ?? null;
}
