import { Body, Query, ValidationPipe } from '@nestjs/common';
import { ValidationError } from '../errors/domain.error.js';
import { toFieldErrors, VALIDATOR_OPTIONS } from './validate-input.js';

/**
 * Checks a form (or a query string) against its class: unknown fields dropped, each bad one named
 * in a ValidationError. Bound to the parameters that read input rather than to every parameter
 * of every route: the API's routes read none, and a global pipe would run on each of their
 * parameters on every request (`test/auth-policy.e2e-spec.ts` fails for a body or query object
 * read without it).
 */
export const INPUT_PIPE = new ValidationPipe({
  ...VALIDATOR_OPTIONS,
  transform: true,
  exceptionFactory: (errors) => new ValidationError(toFieldErrors(errors)),
});

/** The request's form fields, as an instance of the parameter's class, validated. */
export const Form = (): ParameterDecorator => Body(INPUT_PIPE);

/** The request's query string, as an instance of the parameter's class, validated. */
export const QueryForm = (): ParameterDecorator => Query(INPUT_PIPE);
