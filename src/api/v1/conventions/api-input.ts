import { Body, Query, ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { ValidationError } from '../../../common/errors/domain.error.js';
import { toFieldErrors, VALIDATOR_OPTIONS } from '../../../common/validation/validate-input.js';

/** What every object inherits: no input class declares a field of these names. */
const INHERITED_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * The API's input: a JSON object (or the query string) checked against its class. Unlike the
 * pages' forms, a field the class does not know is refused rather than dropped, so a client's
 * typo is named instead of ignored; every bad field is in `error.fields` (422).
 */
class ApiInputPipe extends ValidationPipe {
  constructor() {
    super({
      ...VALIDATOR_OPTIONS,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) => {
        for (const error of errors) {
          if (error.constraints?.whitelistValidation) {
            error.constraints = { unknown: `${error.property} is not a field of this request.` };
          }
        }
        return new ValidationError(toFieldErrors(errors));
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ValidationError({ body: 'The body must be a JSON object.' });
    }
    // class-transformer passes over the names every object inherits (`constructor`, `__proto__`,
    // `toString`), so the whitelist never sees them: named here, beside every other bad field.
    const inherited = Object.keys(value).filter((key) => INHERITED_NAMES.has(key));
    if (inherited.length === 0) return super.transform(value, metadata);
    const unknown = Object.fromEntries(
      inherited.map((key) => [key, `${key} is not a field of this request.`]),
    );
    const rest = Object.fromEntries(
      Object.entries(value).filter(([key]) => !INHERITED_NAMES.has(key)),
    );
    let others: Record<string, string> = {};
    try {
      await super.transform(rest, metadata);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      others = error.fields;
    }
    throw new ValidationError({ ...others, ...unknown });
  }
}

export const API_INPUT_PIPE = new ApiInputPipe();

/** The request's JSON body, as an instance of the parameter's class, validated. */
export const JsonBody = (): ParameterDecorator => Body(API_INPUT_PIPE);

/** The request's query string, as an instance of the parameter's class, validated. */
export const JsonQuery = (): ParameterDecorator => Query(API_INPUT_PIPE);
