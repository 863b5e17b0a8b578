import { Transform } from 'class-transformer';

/** Trims strings and leaves other types for the validators to refuse. */
export const Trim = (): PropertyDecorator =>
  Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

/** Digits only become a number; "0x10", "1e3" or " 7" stay text for the validators to refuse. */
export const ToInteger = (): PropertyDecorator =>
  Transform(({ value }) =>
    typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value,
  );
