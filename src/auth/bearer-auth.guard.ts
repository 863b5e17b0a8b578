import { Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { AuthenticationError } from '../tokens/tokens.errors.js';

const MALFORMED_HEADER = 400;

/** Runs the bearer strategy and turns passport's failures into the API's error codes. */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  override handleRequest<T>(
    err: unknown,
    principal: T | false,
    _info: unknown,
    _ctx: unknown,
    status?: number,
  ): T {
    if (err) throw err;
    if (!principal) {
      // passport-http-bearer fails with 400 when a Bearer header is malformed, and with a bare
      // challenge when no bearer token was sent at all.
      throw new AuthenticationError(
        status === MALFORMED_HEADER ? 'invalid_token' : 'missing_token',
      );
    }
    return principal;
  }
}
