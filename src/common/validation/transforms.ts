import { Transform } from 'class-transformer';
import { ValidateBy } from 'class-validator';

/** Trims strings and leaves other types for the validators to refuse. */
export const Trim = (): PropertyDecorator =>
  Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

/** Digits only become a number; "0x10", "1e3" or " 7" stay text for the validators to refuse. */
export const ToInteger = (): PropertyDecorator =>
  Transform(({ value }) =>
    typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value,
  );

// Control and format characters (NUL, newlines, zero-width spaces, bidi overrides) and the
// combining grapheme joiner make a name that reads differently from what it is; a name must also
// show at least one character. The zero-width joiners stay allowed: emoji sequences and several
// scripts need them.
const INVISIBLE = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u034f]/u;
// Letters that draw nothing (Hangul fillers, the blank Braille pattern) count as blank too, and so
// do marks, which draw only on a letter before them.
const VISIBLE = /[^\s\p{Cc}\p{Cf}\p{M}\u115f\u1160\u2800\u3164\uffa0]/u;

/** A name people will see: printable characters only, at least one of them visible. */
export const VisibleText = (field: string): PropertyDecorator =>
  ValidateBy({
    name: 'visibleText',
    validator: {
      validate: (value: unknown) =>
        typeof value !== 'string' || (!INVISIBLE.test(value) && VISIBLE.test(value)),
      defaultMessage: () =>
        `${field} must be visible text, without control or invisible characters.`,
    },
  });

/** Free text people will see (a description): printable characters only, blank allowed. */
export const PrintableText = (field: string): PropertyDecorator =>
  ValidateBy({
    name: 'printableText',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !INVISIBLE.test(value),
      defaultMessage: () =>
        `${field} must be printable text, without control or invisible characters.`,
    },
  });
