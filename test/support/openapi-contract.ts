import { expect } from '@jest/globals';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Server } from 'node:http';
import request from 'supertest';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

interface HeaderObject {
  required?: boolean;
  schema: object;
}
interface ResponseObject {
  headers?: Record<string, HeaderObject>;
  content?: Record<string, { schema: object }>;
}
export interface OpenApiDocument {
  openapi: string;
  info: { license?: object; contact?: object };
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { schemas: Record<string, object>; securitySchemes: Record<string, object> };
}

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/**
 * The API's own OpenAPI document, fetched from the running app, as a judge of real answers:
 * a response must be documented for its status, its body must match the schema, and every
 * header the document marks required must be there and match.
 */
export class OpenApiContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  private constructor(readonly document: OpenApiDocument) {
    addFormats(this.ajv);
    this.ajv.addSchema(document as object, 'openapi.json');
  }

  static async fetch(server: Server): Promise<OpenApiContract> {
    const res = await request(server).get('/api/v1/openapi.json').expect(200);
    return new OpenApiContract(res.body as OpenApiDocument);
  }

  /** Fails the test, naming what differs, when `res` is not what the document describes. */
  expectMatches(method: string, path: string, res: request.Response): void {
    const operation = this.document.paths[path]?.[method.toLowerCase()];
    expect({ documented: Boolean(operation), method, path }).toEqual({
      documented: true,
      method,
      path,
    });
    const response = operation.responses[String(res.status)];
    expect({ path, status: res.status, documented: Boolean(response) }).toEqual({
      path,
      status: res.status,
      documented: true,
    });
    expect(res.headers['content-type']).toMatch(/^application\/json/);

    const body = this.validator(
      pointer('paths', path, method.toLowerCase(), 'responses', String(res.status)) +
        '/content/application~1json/schema',
    );
    if (!body(res.body)) {
      throw new Error(
        `${method} ${path} ${res.status} does not match its schema: ${this.ajv.errorsText(body.errors)}\n${JSON.stringify(res.body)}`,
      );
    }
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = res.headers[name.toLowerCase()] as string | undefined;
      if (value === undefined) {
        if (header.required) throw new Error(`${method} ${path} ${res.status} lacks ${name}`);
        continue;
      }
      const check = this.ajv.compile(header.schema);
      if (!check(value)) {
        throw new Error(
          `${method} ${path} ${res.status}: ${name}: ${this.ajv.errorsText(check.errors)}`,
        );
      }
    }
  }

  private validator(ref: string): ValidateFunction {
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json#/${ref}` });
      this.validators.set(ref, validate);
    }
    return validate;
  }
}
