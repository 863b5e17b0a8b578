import {
  json,
  urlencoded,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { DomainError } from '../../../common/errors/domain.error.js';
import {
  BodyTooDeepError,
  hasIllFormedText,
  IllFormedTextError,
  nestedDeeperThan,
} from '../../../http/json-depth.js';

/** The largest body the API reads. */
export const BODY_LIMIT_BYTES = 16 * 1024;

export class UnsupportedMediaTypeError extends DomainError {
  readonly code = 'unsupported_media_type';
  constructor(message = 'Send the body as JSON, with "Content-Type: application/json".') {
    super(message);
  }
}

const FORM_OR_JSON =
  'Send the body as a form ("Content-Type: application/x-www-form-urlencoded") or as JSON.';

/** The most fields a form may have (the form parser's own limit). */
const FORM_FIELDS_MAX = 1000;

export class PayloadTooLargeError extends DomainError {
  readonly code = 'payload_too_large';
  constructor(message = `The body is larger than ${BODY_LIMIT_BYTES / 1024} KB.`) {
    super(message);
  }
}

export class InvalidJsonError extends DomainError {
  readonly code = 'bad_request';
  constructor() {
    super('The body is not valid JSON.');
  }
}

/** `application/json`, or a `+json` type, whatever its parameters. */
function isJson(contentType: string | undefined): boolean {
  const type = contentType?.split(';', 1)[0].trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** `application/x-www-form-urlencoded`, whatever its parameters. */
function isForm(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0].trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** Whether the request carries a body, as node's parser framed it. */
function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads the body of an API request that writes (POST, PUT, PATCH): JSON only (415 otherwise),
 * at most 16 KB (413), well formed and at most 32 levels deep (400); no body reads as `{}`, so each missing field is named
 * by validation. GET, HEAD and DELETE take no body and pass untouched.
 */
export function readJsonBody(): RequestHandler {
  return readBody(false);
}

/**
 * The one exception to JSON bodies, for endpoints that follow a standard whose clients send
 * forms (`@ApiEndpoint({ protocol: 'rfc7662' })`, introspection): a form
 * (`application/x-www-form-urlencoded`, plain `key=value` pairs, at most 16 KB) or JSON, read
 * as above; anything else 415.
 */
export function readFormOrJsonBody(): RequestHandler {
  return readBody(true);
}

function readBody(formsToo: boolean): RequestHandler {
  // Any JSON text parses (strict: false): a body that is JSON but not an object (null, 1, "x")
  // is then refused by validation as one (422), as an array is, not called malformed.
  const parseJson = json({ limit: BODY_LIMIT_BYTES, strict: false, type: () => true });
  // The form parser drops a `__proto__` field without a word; it is noted here, and put back
  // below for validation to name it, as it names every field the request does not have.
  const namesProto = new WeakSet<object>();
  const parseForm = urlencoded({
    limit: BODY_LIMIT_BYTES,
    parameterLimit: FORM_FIELDS_MAX,
    extended: false,
    type: () => true,
    verify: (req, _res, raw) => {
      if (new URLSearchParams(raw.toString('utf8')).has('__proto__')) namesProto.add(req);
    },
  });
  const unsupported = () => new UnsupportedMediaTypeError(formsToo ? FORM_OR_JSON : undefined);
  return (req: Request, res: Response, next: NextFunction): void => {
    const method = req.method;
    if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') return next();
    if (!hasBody(req)) {
      req.body = {};
      return next();
    }
    const type = req.headers['content-type'];
    const form = formsToo && isForm(type);
    if (!form && !isJson(type)) return next(unsupported());
    (form ? parseForm : parseJson)(req, res, (error?: unknown) => {
      if (!error) {
        if (namesProto.has(req)) {
          Object.defineProperty(req.body, '__proto__', { value: '', enumerable: true });
        }
        if (nestedDeeperThan(req.body)) return next(new BodyTooDeepError());
        return next(hasIllFormedText(req.body) ? new IllFormedTextError() : undefined);
      }
      const { status, type: kind } = error as { status?: number; type?: string };
      next(
        kind === 'parameters.too.many'
          ? new PayloadTooLargeError(`The form has more than ${FORM_FIELDS_MAX} fields.`)
          : status === 413
            ? new PayloadTooLargeError()
            : status === 415
              ? unsupported()
              : new InvalidJsonError(),
      );
    });
  };
}
