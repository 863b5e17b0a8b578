import { Transform } from 'class-transformer';
import { registerDecorator, ValidateBy, type ValidationArguments } from 'class-validator';
import { isReservedAddress } from '../../common/reserved-address.js';
import { normalizeEmail } from '../email.js';

/** Emails are compared in one form: trimmed and lower-cased. */
export const NormalizedEmail = (): PropertyDecorator =>
  Transform(({ value }) => (typeof value === 'string' ? normalizeEmail(value) : value));

/** The property must equal another one (a confirmation field). */
export function SameAs(property: string, message: string): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'sameAs',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [property],
      options: { message },
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          value === (args.object as Record<string, unknown>)[property],
      },
    });
}

/**
 * An address a person can be reached at: not under the reserved `.invalid` domain, where
 * service accounts have theirs (so nobody registers, is invited with or moves to one).
 */
export const DeliverableAddress = (): PropertyDecorator =>
  ValidateBy({
    name: 'deliverableAddress',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !isReservedAddress(value),
      defaultMessage: () =>
        'Addresses under .invalid receive no mail (service accounts have them): enter a real one.',
    },
  });
