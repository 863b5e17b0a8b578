import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { Router, static as serveStatic, type RequestHandler } from 'express';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../../../common/paths.js';
import { ApiV1Module } from '../api-v1.module.js';
import { BEARER_SCHEME } from './api-endpoint.decorator.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/api/docs';
/** The pages the docs handler answers, GET (and HEAD) only; Swagger UI's files are beneath DOCS_PATH. */
export const API_DOCS_PATHS = [OPENAPI_PATH, DOCS_PATH];

const DESCRIPTION = `Read the profile of a token's owner and the owner's current team.

Every request needs \`Authorization: Bearer <token>\`; tokens are made in the web application under Account Settings > API Tokens and look like \`tsr_\` followed by 36 letters and digits. Every answer is JSON in an envelope: \`{"success": true, "data": …}\` or \`{"success": false, "error": {"code": …, "message": …}}\`, with \`version\` and \`timestamp\`. A path under /api that does not exist answers 404 \`not_found\` in the same envelope, and a method an endpoint does not take answers 405 \`method_not_allowed\` with an \`Allow\` header naming the methods it does take.`;

/** The OpenAPI 3.1 document of /api/v1, generated from the controllers' decorators. */
export function createApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Tessera API')
    .setDescription(DESCRIPTION)
    .setVersion('v1')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'tsr_ + 36 base62 characters',
        description: 'A personal access token.',
      },
      BEARER_SCHEME,
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, { include: [ApiV1Module] });
  for (const schema of Object.values(document.components?.schemas ?? {})) {
    // Every object the API answers with is closed: a field added to an answer without being
    // described here fails the contract test.
    if ('properties' in schema) schema.additionalProperties = false;
  }
  return document;
}

/** The Swagger UI files the docs page uses, from the installed swagger-ui-dist; nothing else. */
const SWAGGER_UI_FILES = new Set(['swagger-ui.css', 'swagger-ui-bundle.js']);

/** Whether a request is for the API's description rather than for the API itself. */
export function isApiDocsPath(path: string): boolean {
  return path === OPENAPI_PATH || path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`);
}

/**
 * GET /api/v1/openapi.json and the Swagger UI page at GET /api/docs, served from the document
 * built once at start and from the installed swagger-ui-dist (no CDN). The page has no inline
 * script or style, so the app's strict Content-Security-Policy holds there too. configureApp
 * sends only `isApiDocsPath` requests here, so API calls pass none of these routes.
 */
export function apiDocs(app: INestApplication): RequestHandler {
  const document = JSON.stringify(createApiDocument(app));
  const page = readFileSync(join(PROJECT_ROOT, 'views', 'api-docs.html'), 'utf8');
  const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const files = serveStatic(swaggerUi, { index: false, maxAge: '1d', fallthrough: true });
  const router = Router({ caseSensitive: true, strict: false });
  router.get(OPENAPI_PATH, (_req, res) => {
    res.type('application/json').send(document);
  });
  router.get(DOCS_PATH, (_req, res) => {
    res.type('text/html').send(page);
  });
  router.get(`${DOCS_PATH}/:file`, (req, res, next) => {
    if (!SWAGGER_UI_FILES.has(req.params.file)) return next();
    req.url = `/${req.params.file}`;
    files(req, res, next);
  });
  return router;
}
