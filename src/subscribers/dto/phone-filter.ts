import { registerDecorator } from 'class-validator';
import { toE164 } from '../phone';

/** A phone number in an international form that toE164 reads (the `?phone=` filter). */
export function IsPhoneFilter(): PropertyDecorator {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isPhoneFilter',
      target: object.constructor,
      propertyName: String(propertyName),
      options: {
        message: `${String(propertyName)} must be an international phone number, e.g. +14155550123 or +1 415 555 0123`,
      },
      validator: { validate: (value: unknown) => typeof value === 'string' && toE164(value) !== null },
    });
}
