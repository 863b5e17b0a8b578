import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationArguments } from 'class-validator';
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
