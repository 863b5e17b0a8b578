import type { INestApplication, Type } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { Router, type RequestHandler } from 'express';
import hbs from 'hbs';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { webhookDocument } from '../../../webhooks/webhook-schemas.js';
import { PROJECT_ROOT } from '../../../common/paths.js';
import type { Assets } from '../../../web/assets.js';
import type { Config } from '../../../config/config.js';
import { CONFIG } from '../../../config/config.module.js';
import { AbilityCatalog } from '../../../config/abilities.config.js';
import { describeEveryMethod } from './every-method.js';
import { endpointsOf } from '../api-routes.js';
import { BEARER_SCHEME } from './api-endpoint.decorator.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/api/docs';
/** What the docs handler serves: both answer GET (and HEAD) only. */
export const API_DOCS_PATHS = [OPENAPI_PATH, DOCS_PATH];

const DESCRIPTION = `Read a token's owner, their teams and the team the token acts in; list and manage that team's members and invitations; read its token inventory and its audit log.

Every request needs \`Authorization: Bearer <token>\`; tokens are made in the web application under Account Settings > API Tokens and look like \`tsr_\` followed by 36 letters and digits. Every answer is JSON in an envelope: \`{"success": true, "data": …}\` (a list adds \`next\`, the cursor of its next page) or \`{"success": false, "error": {"code": …, "message": …}}\` (with \`fields\` naming each bad field of a 422), with \`version\` and \`timestamp\`. Writes take JSON bodies of at most 16 KB; a POST takes an \`Idempotency-Key\`; a GET answers with an \`ETag\` and 304 to \`If-None-Match\`; lists are read a page at a time (\`limit\`, \`cursor\`, \`Link\`).

A path under /api that does not exist answers 404 \`not_found\` in the same envelope. **Every path answers a method it does not take with 405** \`method_not_allowed\` and an \`Allow\` header naming the methods it does take (the \`MethodNotAllowed\` response below), before any token is looked at; HEAD is taken wherever GET is.`;

const { license } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  license: string;
};

/** The OpenAPI 3.1 document of /api/v1, generated from the controllers' decorators. */
export function createApiDocument(app: INestApplication): OpenAPIObject {
  const { publicUrl } = app.get<Config>(CONFIG).app;
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Tessera API')
    .setDescription(DESCRIPTION)
    .setVersion('v1')
    .addServer(publicUrl, 'This deployment (APP_URL)')
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
  // Those who run this deployment, at its own address.
  config.info.contact = { name: 'Tessera', url: publicUrl };
  // OpenAPI 3.1 names a license by its SPDX identifier, as package.json does (the swagger
  // package's types know only a URL).
  config.info.license = { name: license, identifier: license } as typeof config.info.license;
  const catalog = app.get(AbilityCatalog);
  const scheme = config.components!.securitySchemes![BEARER_SCHEME] as { description: string };
  scheme.description = `A personal access token. Each endpoint names the ability it needs; this deployment offers:\n\n${catalog.entries.map((a) => `- \`${a.name}\`: ${a.description}`).join('\n')}`;
  const document = SwaggerModule.createDocument(app, config, { include: apiModules(app) });
  for (const schema of Object.values(document.components?.schemas ?? {})) {
    // Every object the API answers with is closed: a field added to an answer without being
    // described here fails the contract test.
    if ('properties' in schema) schema.additionalProperties = false;
  }
  describeEveryMethod(document);
  // What Tessera sends to webhook endpoints (OpenAPI 3.1's `webhooks`).
  (document as OpenAPIObject & { webhooks?: object }).webhooks = webhookDocument();
  return document;
}

/** The modules that declare API endpoints: the API's own, and a deployment's (docs/extending.md). */
function apiModules(app: INestApplication): Type[] {
  const modules = new Set<Type>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type | null;
      if (controller && endpointsOf(controller).length > 0) modules.add(module.metatype as Type);
    }
  }
  return [...modules];
}

/** The Swagger UI files the docs page uses, from the installed swagger-ui-dist; nothing else. */
const SWAGGER_UI_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js'];

/** Whether a request is for the API's description rather than for the API itself. */
export function isApiDocsPath(path: string): boolean {
  return API_DOCS_PATHS.includes(path);
}

/**
 * GET /api/v1/openapi.json and the Swagger UI page at GET /api/docs, both made once at start.
 * Swagger UI's two files join the app's assets (no CDN): hashed names, kept for a year. The page
 * has no inline script or style, so the app's strict Content-Security-Policy holds there too.
 * configureApp sends only `isApiDocsPath` requests here, so API calls pass none of these routes.
 */
export function apiDocs(app: INestApplication, assets: Assets): RequestHandler {
  const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  for (const file of SWAGGER_UI_FILES) assets.add(`swagger-ui/${file}`, join(swaggerUi, file));
  const document = JSON.stringify(createApiDocument(app));
  const template = readFileSync(join(PROJECT_ROOT, 'views', 'api-docs.hbs'), 'utf8');
  const page = hbs.handlebars.compile(template)(
    {},
    { helpers: { asset: (name: string) => assets.url(name) } },
  );
  const router = Router({ caseSensitive: true, strict: false });
  router.get(OPENAPI_PATH, (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.type('application/json').send(document);
  });
  router.get(DOCS_PATH, (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.type('text/html').send(page);
  });
  return router;
}
