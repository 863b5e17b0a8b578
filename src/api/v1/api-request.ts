import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiAuthentication } from './api-authentication.js';
import { readJsonBody } from './conventions/json-body.js';

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
