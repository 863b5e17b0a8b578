import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { ApiV1Module } from '../api-v1.module.js';
import { BEARER_SCHEME } from './api-endpoint.decorator.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/api/docs';

const DESCRIPTION = `Read the profile of a token's owner and the owner's current team.

Every request needs \`Authorization: Bearer <token>\`; tokens are made in the web application under Account Settings > API Tokens and look like \`tsr_\` followed by 36 letters and digits. Every answer is JSON in an envelope: \`{"success": true, "data": …}\` or \`{"success": false, "error": {"code": …, "message": …}}\`, with \`version\` and \`timestamp\`. A path under /api that does not exist answers 404 \`not_found\` in the same envelope.`;

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

/**
 * The document at GET /api/v1/openapi.json and Swagger UI at GET /api/docs, with Swagger UI's
 * files served from the installed swagger-ui-dist package (no CDN).
 */
export function setupApiDocs(app: INestApplication): void {
  const express = app as NestExpressApplication;
  // Swagger UI's page carries inline <style> blocks; its scripts stay same-origin files.
  express.use(DOCS_PATH, (_req: Request, res: Response, next: NextFunction) => {
    const csp = res.getHeader('Content-Security-Policy');
    if (typeof csp === 'string') {
      res.setHeader(
        'Content-Security-Policy',
        csp.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'"),
      );
    }
    next();
  });
  SwaggerModule.setup(DOCS_PATH, app, createApiDocument(app), {
    jsonDocumentUrl: OPENAPI_PATH,
    raw: ['json'],
    customSiteTitle: 'Tessera API',
    swaggerOptions: { persistAuthorization: false, tryItOutEnabled: false },
  });
}
