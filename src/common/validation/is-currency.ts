import { registerDecorator, ValidationOptions } from 'class-validator';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export function isCurrencyCode(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Z]{3}$/.test(value) && CURRENCIES.has(value);
}

/** An ISO 4217 code in upper case, e.g. USD. */
export function IsCurrency(options?: ValidationOptions) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isCurrency',
      target: object.constructor,
      propertyName,
      options: {
        message: `${propertyName} must be an ISO 4217 currency code in upper case, e.g. USD`,
        ...options,
      },
      validator: { validate: isCurrencyCode },
    });
}
