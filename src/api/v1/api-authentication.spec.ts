import { describe, expect, it, jest } from '@jest/globals';
import type { Request, Response } from 'express';
import { SystemClock } from '../../clock/clock.js';
import type { Metrics } from '../../metrics/metrics.js';
import { AuthenticationError } from '../../tokens/tokens.errors.js';
import type { TokenAuthenticator, TokenPrincipal } from '../../tokens/token-authenticator.js';
import { tokenOn } from '../../http/request-state.js';
import {
  ApiAuthentication,
  type ApiRateLimiter,
  type BearerStrategy,
} from './api-authentication.js';

describe('ApiAuthentication', () => {
  function build(outcome: TokenPrincipal | Error) {
    // The strategy as passport-http-bearer calls back: success or error on the attempt.
    const bearer = {
      authenticate: jest.fn(function (this: {
        success(principal: TokenPrincipal): void;
        error(error: unknown): void;
      }) {
        if (outcome instanceof Error) this.error(outcome);
        else this.success(outcome);
      }),
    };
    const tokens = { recordUse: jest.fn(), recordRefusal: jest.fn() };
    const attempt = { key: 'api-client:203.0.113.9', window: { count: 1, resetMs: 60_000 } };
    const limiter = {
      enabled: true,
      reserveClient: jest.fn((_ip: string | undefined, _res: Response): typeof attempt => attempt),
      reportFailure: jest.fn(),
      giveBack: jest.fn(),
      admitToken: jest.fn(),
    };
    const api = new ApiAuthentication(
      bearer as unknown as BearerStrategy,
      tokens as unknown as TokenAuthenticator,
      limiter as unknown as ApiRateLimiter,
      new SystemClock(),
    );
    const req = { ip: '203.0.113.9', headers: { 'user-agent': 'curl/8.5.0' } } as Request;
    const res = {} as Response;
    return { api, bearer, tokens, limiter, req, res, attempt };
  }

  it("should put the principal on the request, count it in the token's usage and its budget", async () => {
    const principal = { tokenId: 4 } as TokenPrincipal;
    const { api, tokens, limiter, req, res, attempt } = build(principal);
    await expect(api.authenticate(req, res)).resolves.toBe(principal);
    expect(tokenOn(req)).toBe(principal);
    expect(tokens.recordUse).toHaveBeenCalledWith(principal, {
      ip: '203.0.113.9',
      userAgent: 'curl/8.5.0',
    });
    // Counted against the client before the lookup, then moved to the token's budget.
    expect(limiter.reserveClient).toHaveBeenCalledWith('203.0.113.9', res);
    expect(limiter.admitToken).toHaveBeenCalledWith(attempt, 4, res, 'requests');
    expect(limiter.reportFailure).not.toHaveBeenCalled();
  });

  it("should count a refusal against the client's failures, and keep a known token's for the log", async () => {
    const refused = new AuthenticationError('token_revoked', undefined, { tokenId: 9, userId: 2 });
    const { api, tokens, limiter, req, res, attempt } = build(refused);
    await expect(api.authenticate(req, res)).rejects.toBe(refused);
    expect(tokenOn(req)).toBeUndefined();
    expect(tokens.recordRefusal).toHaveBeenCalledWith(refused, {
      ip: '203.0.113.9',
      userAgent: 'curl/8.5.0',
    });
    expect(limiter.reportFailure).toHaveBeenCalledWith(res, attempt);
    expect(limiter.admitToken).not.toHaveBeenCalled();
    expect(limiter.giveBack).not.toHaveBeenCalled();
    expect(tokens.recordUse).not.toHaveBeenCalled();
  });

  it('should not keep an unknown token for the log', async () => {
    const { api, tokens, limiter, req, res } = build(new AuthenticationError('invalid_token'));
    await expect(api.authenticate(req, res)).rejects.toBeInstanceOf(AuthenticationError);
    expect(tokens.recordRefusal).not.toHaveBeenCalled();
    expect(limiter.reportFailure).toHaveBeenCalledTimes(1);
  });

  it('should give the attempt back when the token could not be checked', async () => {
    const outage = new Error('database unavailable');
    const { api, limiter, req, res, attempt } = build(outage);
    await expect(api.authenticate(req, res)).rejects.toBe(outage);
    expect(limiter.giveBack).toHaveBeenCalledWith(attempt);
    expect(limiter.reportFailure).not.toHaveBeenCalled();
  });

  it('should look nothing up when the client has no attempts left', async () => {
    const { api, bearer, limiter, req, res } = build({ tokenId: 4 } as TokenPrincipal);
    const refused = new Error('rate limited');
    limiter.reserveClient.mockImplementation(() => {
      throw refused;
    });
    await expect(api.authenticate(req, res)).rejects.toBe(refused);
    expect(bearer.authenticate).not.toHaveBeenCalled();
    expect(limiter.admitToken).not.toHaveBeenCalled();
  });

  it('should answer a refusal itself, in the envelope with its challenge, count it, and route nothing', async () => {
    const refused = new AuthenticationError('token_revoked');
    const metrics = { authentication: jest.fn() };
    const { bearer, tokens, limiter } = build(refused);
    const api = new ApiAuthentication(
      bearer as unknown as BearerStrategy,
      tokens as unknown as TokenAuthenticator,
      limiter as unknown as ApiRateLimiter,
      new SystemClock(),
      metrics as unknown as Metrics,
    );
    const req = {
      ip: '203.0.113.9',
      method: 'GET',
      path: '/api/v1/team',
      headers: {},
    } as Request;
    const headers = new Map<string, unknown>();
    const end = jest.fn();
    const res = {
      req,
      headersSent: false,
      statusCode: 200,
      setHeader: (name: string, value: unknown) => headers.set(name, value),
      end,
    } as unknown as Response;
    const next = jest.fn();
    api.use(req, res, next);
    await new Promise((resolve) => setImmediate(resolve));
    expect(res.statusCode).toBe(401);
    expect(end).toHaveBeenCalledTimes(1);
    expect(JSON.parse(end.mock.calls[0][0] as string)).toMatchObject({
      success: false,
      error: { code: 'token_revoked' },
    });
    expect(headers.get('Content-Type')).toBe('application/json; charset=utf-8');
    expect(headers.get('WWW-Authenticate')).toMatch(/^Bearer realm="tessera"/);
    expect(metrics.authentication).toHaveBeenCalledWith('token_revoked');
    expect(next).not.toHaveBeenCalled();
    expect(tokenOn(req)).toBeUndefined();
  });
});
