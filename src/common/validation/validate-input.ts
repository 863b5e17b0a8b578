import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validateSync, type ValidationError as ClassValidatorError } from 'class-validator';
import { ValidationError } from '../errors/domain.error.js';

/**
 * class-validator runs a property's decorators bottom-up; with stopAtFirstError the one written
 * nearest the property (the type check, in our DTOs) speaks first.
 */
export const VALIDATOR_OPTIONS = {
  whitelist: true,
  forbidUnknownValues: true,
  stopAtFirstError: true,
  validationError: { target: false, value: false },
} as const;

/** The first message of each bad field, keyed by the field's name. */
export function toFieldErrors(errors: ClassValidatorError[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const error of errors) {
    const messages = Object.values(error.constraints ?? {});
    fields[error.property] = messages[0] ?? 'is invalid';
  }
  return fields;
}

/** Turns plain input into a validated DTO, or throws a ValidationError naming each bad field. */
export function validateInput<T extends object>(type: ClassConstructor<T>, plain: object): T {
  const dto = plainToInstance(type, plain);
  const errors = validateSync(dto, VALIDATOR_OPTIONS);
  if (errors.length > 0) {
    throw new ValidationError(toFieldErrors(errors));
  }
  return dto;
}
