import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-http-bearer';
import { BEARER_REALM } from '../../auth/auth.errors.js';
import { TokensService, type TokenPrincipal } from '../../tokens/tokens.service.js';

@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly tokens: TokensService) {
    super({ realm: BEARER_REALM });
  }

  validate(token: string): Promise<TokenPrincipal> {
    return this.tokens.authenticate(token);
  }

  /**
   * passport-http-bearer also accepts `access_token` from the body and the query string; only
   * the Authorization header may carry a token here, because URLs and bodies end up in logs.
   * RFC 6750 allows several spaces after the scheme, which the library's split(' ') does not.
   */
  override authenticate(req: Request, options?: object): void {
    const authorization = req.headers.authorization?.replace(/^(\S+) +(?=\S)/, '$1 ');
    super.authenticate({ headers: { authorization } } as Request, options);
  }
}
