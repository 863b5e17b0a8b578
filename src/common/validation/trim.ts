import { Transform } from 'class-transformer';

/** Trims strings and leaves other types for the validators to refuse. */
export const Trim = (): PropertyDecorator =>
  Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));
