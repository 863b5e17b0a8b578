import {
  createParamDecorator,
  Inject,
  Injectable,
  Optional,
  type ExecutionContext,
  type NestMiddleware,
} from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { NextFunction, Request, Response } from 'express';
import { Strategy } from 'passport-http-bearer';
import { Clock } from '../../clock/clock.js';
import { DomainError } from '../../common/errors/domain.error.js';
import { AllExceptionsFilter } from '../../http/all-exceptions.filter.js';
import { setToken, tokenOn } from '../../http/request-state.js';
import { apiErrorAnswers, BEARER_REALM } from './api-errors.js';
import { Metrics } from '../../metrics/metrics.js';
import type { Config } from '../../config/config.js';
import { CONFIG } from '../../config/config.module.js';
import { clientKeyOf } from '../../rate-limit/client-address.js';
import { RateLimitedError } from '../../rate-limit/rate-limit.errors.js';
import { RateLimitStorage, type WindowCount } from '../../rate-limit/rate-limit.storage.js';
import { TeamNotFoundError } from '../../teams/teams.errors.js';
import { AuthenticationError, headerRefusal } from '../../tokens/tokens.errors.js';
import {
  TokenAuthenticator,
  type ClientInfo,
  type TokenPrincipal,
} from '../../tokens/token-authenticator.js';

/** passport-http-bearer's answer for a malformed Authorization header. */
const MALFORMED_HEADER = 400;

/**
 * passport-http-bearer, with the token looked up by `TokenAuthenticator`. Only the Authorization header
 * may carry a token: the library would also take `access_token` from the body or the query
 * string, and URLs and bodies end up in logs. RFC 6750 allows several spaces after the scheme,
 * which the library's split(' ') does not.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly tokens: TokenAuthenticator) {
    super({ realm: BEARER_REALM });
  }

  validate(token: string): Promise<TokenPrincipal> {
    return this.tokens.authenticate(token);
  }

  override authenticate(req: Request, options?: object): void {
    const authorization = req.headers.authorization?.replace(/^(\S+) +(?=\S)/, '$1 ');
    super.authenticate({ headers: { authorization } } as Request, options);
  }
}

/**
 * What a valid token's requests count on: its budget of API requests (RATE_LIMIT_API_PER_TOKEN),
 * or its budget of introspections (RATE_LIMIT_INTROSPECTIONS_PER_TOKEN), kept apart because a
 * service checks a token for each request it serves.
 */
export type TokenBudget = 'requests' | 'introspections';

/** An API request's lookup, counted against its client before the token is looked up. */
export interface ClientAttempt {
  /** The client's key (its IP, an IPv6 client by its /64). */
  client: string;
  key: string;
  window: WindowCount;
}

/**
 * How many times its failure limit an address may have tokens looked up (failed, or still in
 * flight) in a window before nothing more from it is looked up. Past the failure limit a bad
 * token is still looked up (answered 429), because a good token from the same address (behind
 * one NAT or CI runner) must be served on its own budget; this bound keeps a flood of guesses
 * from one address off the database, at the price of refusing its good tokens too, which takes
 * ten failures a second for a whole minute at the default limit.
 */
export const LOOKUPS_PER_FAILURE_LIMIT = 10;

/**
 * The API's limits: each valid token has its own budget, whatever the address it comes from.
 * Failures (a missing or bad token) count per client IP: past RATE_LIMIT_API_ANONYMOUS_PER_IP
 * the address's bad tokens are answered 429, and past LOOKUPS_PER_FAILURE_LIMIT times that
 * nothing from it is looked up until the window ends. Every answer says where the client
 * stands (RateLimit-Limit, -Remaining, -Reset).
 */
@Injectable()
export class ApiRateLimiter {
  private readonly windowMs: number;
  private readonly maxLookups: number;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {
    this.windowMs = config.security.rateLimit.windowSeconds * 1000;
    this.maxLookups = config.security.rateLimit.anonymousPerIp * LOOKUPS_PER_FAILURE_LIMIT;
  }

  get enabled(): boolean {
    return this.config.security.rateLimit.enabled;
  }

  /**
   * Before authentication: counts the lookup against the client IP, in one atomic step, or
   * refuses it unchecked when the IP has had too many looked up. Of requests sent at the same
   * moment, no more than that bound get their token looked up. A failure keeps the lookup
   * counted (`reportFailure`); a success gives it back (`admitToken`), so only failures and
   * lookups in flight use the bound.
   */
  reserveClient(ip: string | undefined, res: Response): ClientAttempt | Promise<ClientAttempt> {
    const client = clientKeyOf(ip);
    const key = `api-lookups:${client}`;
    return settle(this.storage.hit(key, this.windowMs, 'api-client'), (window) => {
      if (window.count <= this.maxLookups) return { client, key, window };
      this.report(res, this.config.security.rateLimit.anonymousPerIp, window);
      return settle(this.storage.release(key, 'api-client'), () => {
        throw new RateLimitedError(seconds(window.resetMs));
      });
    });
  }

  /**
   * After a failed authentication: the lookup stays counted, and the failure counts against the
   * client IP; past its limit the answer is 429 instead of the failure's own (thrown here).
   */
  reportFailure(res: Response, attempt: ClientAttempt): void | Promise<void> {
    const limit = this.config.security.rateLimit.anonymousPerIp;
    return settle(
      this.storage.hit(`api-failures:${attempt.client}`, this.windowMs, 'api-client'),
      (failures) => {
        this.report(res, limit, failures);
        if (failures.count > limit) throw new RateLimitedError(seconds(failures.resetMs));
      },
    );
  }

  /** The attempt was not checked (the database failed, say): it does not count. */
  giveBack(attempt: ClientAttempt): void | Promise<void> {
    return this.storage.release(attempt.key, 'api-client');
  }

  /**
   * After a successful authentication: the client's reserved attempt is given back, and the
   * request counts on the token's budget instead.
   */
  admitToken(
    attempt: ClientAttempt,
    tokenId: number,
    res: Response,
    budget: TokenBudget = 'requests',
  ): void | Promise<void> {
    const introspecting = budget === 'introspections';
    const { perToken, introspectionsPerToken } = this.config.security.rateLimit;
    const released = this.storage.release(attempt.key, 'api-client');
    const counted = settle(
      introspecting
        ? this.storage.hit(`api-introspections:${tokenId}`, this.windowMs, 'api-introspections')
        : this.storage.hit(`api-token:${tokenId}`, this.windowMs, 'api-token'),
      (window) =>
        this.admit(
          res,
          introspecting ? introspectionsPerToken : perToken,
          window,
          window.count - 1,
        ),
    );
    return released instanceof Promise ? Promise.all([released, counted]).then(() => {}) : counted;
  }

  /** Reports the window; refuses when `used` (the hits before this one) leaves no room. */
  private admit(res: Response, limit: number, window: WindowCount, used: number): void {
    this.report(res, limit, window);
    if (used >= limit) throw new RateLimitedError(seconds(window.resetMs));
  }

  private report(res: Response, limit: number, window: WindowCount): void {
    res.setHeader('RateLimit-Limit', limit);
    res.setHeader('RateLimit-Remaining', Math.max(0, limit - window.count));
    res.setHeader('RateLimit-Reset', seconds(window.resetMs));
  }
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Runs `then` on a value now, or once it arrives when it is a promise. */
function settle<T, R>(value: T | Promise<T>, then: (value: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(then) : then(value);
}

/** The object passport.authenticate() puts over a strategy for one request. */
interface Attempt {
  success(principal: TokenPrincipal): void;
  fail(challenge?: string | number, status?: number): void;
  error(error: unknown): void;
  authenticate(req: Request): void;
}

/**
 * The one place an API request is authenticated: the API module mounts it on its routes, ahead
 * of their guard and handler. The lookup is counted against the client address before the token
 * is looked up and, once the token proves good, on the token instead, while a failure counts
 * against the address (the rate limits: ApiRateLimiter); a success
 * is counted in the token's usage (in memory, written later), a refusal of a known token kept for
 * the security log. The principal is kept in the request's state for the route's guard, which checks the
 * route's ability. A refusal is answered right here, in the envelope the exception filter gives
 * every error, without Nest's route execution: Express has matched the route to run this
 * middleware, so the log and the metrics still name it. A path or method no route takes is
 * answered 404 or 405 whatever its token, and costs no lookup (docs/architecture.md).
 */
@Injectable()
export class ApiAuthentication implements NestMiddleware {
  private readonly errors: AllExceptionsFilter;

  constructor(
    private readonly strategy: BearerStrategy,
    private readonly tokens: TokenAuthenticator,
    private readonly limiter: ApiRateLimiter,
    clock: Clock,
    // Present when METRICS_ENABLED (and never in the operators' CLI).
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.errors = new AllExceptionsFilter(clock, apiErrorAnswers);
  }

  use(req: Request, res: Response, next: NextFunction, budget: TokenBudget = 'requests'): void {
    this.authenticate(req, res, budget).then(
      () => next(),
      (refusal: unknown) => {
        this.metrics?.authentication(refusal instanceof DomainError ? refusal.code : 'error');
        try {
          this.errors.answer(refusal, req, res);
        } catch (failed) {
          // Never a rejection nobody handles: Express's error handling takes it from here.
          next(failed);
        }
      },
    );
  }

  async authenticate(
    request: Request,
    response: Response,
    budget: TokenBudget = 'requests',
  ): Promise<TokenPrincipal> {
    // The lookup is counted against the client IP before the token is looked up (an atomic
    // step), and given back once the token proves good.
    // Express works the address out anew on each read (TRUST_PROXY, X-Forwarded-For): once here.
    const client: ClientInfo = { ip: request.ip, userAgent: request.headers['user-agent'] };
    let reserved: ClientAttempt | undefined;
    if (this.limiter.enabled) {
      const reserving = this.limiter.reserveClient(client.ip, response);
      reserved = reserving instanceof Promise ? await reserving : reserving;
    }
    let principal: TokenPrincipal;
    try {
      principal = await this.bearer(request);
    } catch (error) {
      if (error instanceof AuthenticationError && error.refused) {
        this.tokens.recordRefusal(error, client);
      }
      if (reserved) {
        // Past the address's failure limit, the failure is answered 429 instead (thrown there).
        if (error instanceof AuthenticationError) {
          const reported = this.limiter.reportFailure(response, reserved);
          if (reported) await reported;
        } else await this.limiter.giveBack(reserved);
      }
      throw error;
    }
    this.tokens.recordUse(principal, client);
    if (reserved) {
      const counting = this.limiter.admitToken(reserved, principal.tokenId, response, budget);
      if (counting) await counting;
    }
    // Only a request within its token's budget carries it on.
    setToken(request, principal);
    return principal;
  }

  /**
   * Runs the strategy for one request as passport.authenticate() does (a fresh object over the
   * strategy with success/fail/error), without building passport's middleware anew for every
   * request, and turns its failures into the API's error codes.
   */
  private bearer(req: Request): Promise<TokenPrincipal> {
    return new Promise((resolve, reject) => {
      const attempt = Object.create(this.strategy) as Attempt;
      attempt.success = resolve;
      attempt.error = reject;
      // A bare challenge means no bearer token was sent; 400, a malformed Bearer header. What
      // the header held instead is put in words here, on refusal only.
      attempt.fail = (challenge, status) =>
        reject(
          headerRefusal(
            req.headers.authorization,
            challenge === MALFORMED_HEADER || status === MALFORMED_HEADER,
          ),
        );
      attempt.authenticate(req);
    });
  }
}

/** The token this request was authenticated with (a route behind `@BearerAuth()`). */
export function principalOf(req: Request): TokenPrincipal {
  const principal = tokenOn(req);
  if (!principal)
    throw new Error('No principal on the request: is the route behind @BearerAuth()?');
  return principal;
}

const principalIn = (ctx: ExecutionContext): TokenPrincipal =>
  principalOf(ctx.switchToHttp().getRequest<Request>());

/** The user the presented token acts for. */
export const CurrentUser = createParamDecorator(
  (_: unknown, ctx: ExecutionContext) => principalIn(ctx).user,
);

/** The current team of the token's user, as it was when this request was authenticated. */
export const CurrentTeam = createParamDecorator((_: unknown, ctx: ExecutionContext) => {
  const team = principalIn(ctx).team;
  if (!team) throw new TeamNotFoundError();
  return team;
});

/** The presented token itself, as it was when this request was authenticated. */
export const CurrentToken = createParamDecorator((_: unknown, ctx: ExecutionContext) =>
  principalIn(ctx),
);
