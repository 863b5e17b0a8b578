import { Transform } from 'class-transformer';
import { registerDecorator, ValidateBy, type ValidationArguments } from 'class-validator';
import { isReservedAddress } from '../../common/reserved-address.js';
import { normalizeEmail } from '../email.js';

/** Emails are compared in one form (`normalizeEmail`): composed, lower-cased, the domain in ASCII. */
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
 * Quotes and angle brackets (`"<a@b>"@example.com` is a valid address): mail headers rewrite
 * them, so the message would go to another address than the one stored.
 */
const REWRITTEN = /["<>]/;

/**
 * Control, format and blank characters (zero-width spaces and joiners, bidi overrides, spaces of
 * any width, Hangul fillers, the blank Braille pattern): an address that shows as another one,
 * so that an invitation to it, say, reads as one to someone else.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Default_Ignorable_Code_Point}\u2800]/u;

/**
 * An address a person can be reached at, as it is stored: not under the reserved `.invalid`
 * domain, where service accounts have theirs (so nobody registers, is invited with or moves to
 * one), without the quotes or angle brackets a message's headers would rewrite, and without
 * invisible characters.
 */
export const DeliverableAddress = (): PropertyDecorator =>
  ValidateBy({
    name: 'deliverableAddress',
    validator: {
      validate: (value: unknown) =>
        typeof value !== 'string' ||
        (!isReservedAddress(value) && !REWRITTEN.test(value) && !INVISIBLE.test(value)),
      defaultMessage: (args) => {
        const value = typeof args?.value === 'string' ? args.value : '';
        if (REWRITTEN.test(value)) {
          return 'Enter the address without quotes or angle brackets (" < >): mail would not reach it as written.';
        }
        if (INVISIBLE.test(value)) {
          return 'Enter the address without invisible or control characters: it would show as another one.';
        }
        return 'Addresses under .invalid receive no mail (service accounts have them): enter a real one.';
      },
    },
  });
