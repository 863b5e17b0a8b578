import type {
  OpenAPIObject,
  OperationObject,
  PathItemObject,
  ReferenceObject,
  ResponseObject,
} from '@nestjs/swagger';
import { API_VERSION } from '../../../common/http/envelope.js';
import { GENERIC_MESSAGES } from '../../../http/all-exceptions.filter.js';
import { ALWAYS } from './api-endpoint.decorator.js';

/** The methods a path of the API may be asked with that its routes do not take. */
const OTHER_METHODS = ['post', 'put', 'patch', 'delete'] as const;

function errorAnswer(description: string, code: string, message: string): ResponseObject {
  return {
    description,
    headers: { ...ALWAYS },
    content: {
      'application/json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/ErrorEnvelope' },
            {
              type: 'object',
              properties: {
                error: { type: 'object', properties: { code: { type: 'string', enum: [code] } } },
              },
            },
          ],
          example: {
            success: false,
            error: { code, message },
            version: API_VERSION,
            timestamp: '2026-11-22T10:15:30.123456Z',
          },
        },
      },
    },
  };
}

/**
 * What every path of the API answers beyond its routes, added to the generated document: HEAD
 * wherever GET is (the same status and headers, no body); on every operation, 400
 * `bad_request` and 431 `headers_too_large`, which node's parser answers in the same envelope
 * before any route runs. A method a path does not take is answered 405 with `Allow`: that is
 * said once, in the document's description and its `MethodNotAllowed` response, rather than as
 * an operation for each method of each path, which a generated client would offer as a call.
 */
export function describeEveryMethod(document: OpenAPIObject): void {
  const responses = (document.components ??= {}).responses ?? {};
  document.components.responses = responses;
  responses.BadRequest = errorAnswer(
    'A request the server could not read (a malformed request line or header).',
    'bad_request',
    GENERIC_MESSAGES[400],
  );
  responses.HeadersTooLarge = errorAnswer(
    'The request headers are larger than the server takes.',
    'headers_too_large',
    'The request headers are too large.',
  );
  const notAllowed = errorAnswer(
    'Any path, asked with a method it does not take: `Allow` names those it takes.',
    'method_not_allowed',
    GENERIC_MESSAGES[405],
  );
  notAllowed.headers = {
    ...notAllowed.headers,
    Allow: {
      description: 'The methods the path takes.',
      required: true,
      schema: { type: 'string' },
    },
  };
  responses.MethodNotAllowed = notAllowed;

  for (const item of Object.values(document.paths) as PathItemObject[]) {
    const get = item.get;
    if (get && !item.head) item.head = headOf(get);
    for (const method of ['get', 'head', ...OTHER_METHODS] as const) {
      const operation = item[method];
      if (!operation) continue;
      // A body that is not JSON is a 400 the endpoint describes itself, with node's.
      operation.responses['400'] ??= { $ref: '#/components/responses/BadRequest' };
      operation.responses['431'] = { $ref: '#/components/responses/HeadersTooLarge' };
    }
  }
}

/** HEAD of a GET: the same answers, with their headers and no body. */
function headOf(get: OperationObject): OperationObject {
  const answers: OperationObject['responses'] = {};
  for (const [status, response] of Object.entries(get.responses) as [
    string,
    ResponseObject | ReferenceObject,
  ][]) {
    if ('$ref' in response) {
      answers[status] = response;
      continue;
    }
    answers[status] = { description: response.description, headers: response.headers };
  }
  return {
    ...get,
    operationId: `${get.operationId ?? 'get'}Headers`,
    summary: `${get.summary ?? ''} (headers only)`.trim(),
    description: `The answer of GET without its body: the same status and headers.`,
    responses: answers,
  };
}
