import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiAuthentication } from './api-authentication.js';
import { readFormOrJsonBody, readJsonBody } from './conventions/json-body.js';

/**
 * What every API request goes through before its route, as one middleware (one Express layer
 * a path): authentication (which answers a refusal itself), then the JSON body of a write.
 */
@Injectable()
export class ApiRequest implements NestMiddleware {
  private readonly body = readJsonBody();

  constructor(private readonly authentication: ApiAuthentication) {}

  use(req: Request, res: Response, next: NextFunction): void {
    this.authentication.use(req, res, (error?: unknown) =>
      error ? next(error) : this.body(req, res, next),
    );
  }
}

/**
 * The same for the routes of an endpoint that follows a standard's protocol instead of the API's
 * conventions (`@ApiEndpoint({ protocol: 'rfc7662' })`: introspection): authentication, counted
 * on the token's budget of introspections, then a form or JSON body.
 */
@Injectable()
export class ProtocolRequest implements NestMiddleware {
  private readonly body = readFormOrJsonBody();

  constructor(private readonly authentication: ApiAuthentication) {}

  use(req: Request, res: Response, next: NextFunction): void {
    this.authentication.use(
      req,
      res,
      (error?: unknown) => (error ? next(error) : this.body(req, res, next)),
      'introspections',
    );
  }
}
