import { describe, expect, it } from '@jest/globals';
import { NotFoundException } from '@nestjs/common';
import type { Request } from 'express';
import { QueryFailedError } from 'typeorm';
import { SystemClock } from '../clock/clock.js';
import { DomainError, ValidationError } from '../common/errors/domain.error.js';
import { AllExceptionsFilter, type ApiErrorAnswers } from './all-exceptions.filter.js';

const request = { method: 'GET', path: '/api/v1/user/profile' } as Request;

/** A feature's error, as the tokens feature's revoked token is (common imports no feature). */
class RevokedTokenError extends DomainError {
  readonly code = 'token_revoked';
  constructor() {
    super('The bearer token has been revoked.');
  }
}

describe('AllExceptionsFilter.resolve', () => {
  // A door's statuses, as the API's table gives them (common imports no door).
  const door: ApiErrorAnswers = {
    statusOf: (error) => (error.code === 'token_revoked' ? 401 : 422),
    challengeOf: () => undefined,
  };
  const filter = new AllExceptionsFilter(new SystemClock(), door);
  // The filter logs unexpected errors; keep the test output clean.
  Object.assign(filter, { logger: { error: () => undefined, warn: () => undefined } });

  it("should map domain errors to their door's status and keep their message", () => {
    expect(filter.resolve(new RevokedTokenError(), request)).toEqual({
      status: 401,
      code: 'token_revoked',
      message: 'The bearer token has been revoked.',
      fields: undefined,
    });
    expect(
      filter.resolve(new ValidationError({ name: 'Name is required.' }), request),
    ).toMatchObject({
      status: 422,
      fields: { name: 'Name is required.' },
    });
  });

  it('should answer 503 when the database cannot be reached', () => {
    const lost = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), {
      code: 'ECONNREFUSED',
    });
    expect(filter.resolve(lost, request)).toMatchObject({
      status: 503,
      code: 'service_unavailable',
    });
    const wrapped = new QueryFailedError(
      'SELECT 1',
      [],
      Object.assign(new Error('gone'), { code: 'PROTOCOL_CONNECTION_LOST' }),
    );
    expect(filter.resolve(wrapped, request)).toMatchObject({ status: 503 });
  });

  it('should answer 503, soon to try again, when writes kept conflicting past their retries', () => {
    for (const conflict of [
      Object.assign(new Error('Deadlock found when trying to get lock'), {
        code: 'ER_LOCK_DEADLOCK',
        errno: 1213,
      }),
      new QueryFailedError(
        'UPDATE t',
        [],
        Object.assign(new Error('certification'), { errno: 3101 }),
      ),
    ]) {
      expect(filter.resolve(conflict, request)).toEqual({
        status: 503,
        code: 'service_unavailable',
        message: 'Others were changing the same thing at the same moment. Try again in a moment.',
        retryAfterSeconds: 1,
      });
    }
  });

  it('should hide everything internal when an error is unexpected', () => {
    const sqlError = new QueryFailedError(
      "SELECT * FROM users WHERE email = 'x'",
      [],
      Object.assign(new Error("Unknown column 'x'"), { code: 'ER_BAD_FIELD_ERROR' }),
    );
    const resolved = filter.resolve(sqlError, request);
    expect(resolved).toEqual({
      status: 500,
      code: 'internal_error',
      message: 'Something went wrong on our side.',
    });
  });

  it('should give router and parser errors a code and a generic message', () => {
    expect(filter.resolve(new NotFoundException('Cannot GET /api/x'), request)).toEqual({
      status: 404,
      code: 'not_found',
      message: 'Not found.',
    });
    const tooLarge = Object.assign(new Error('request entity too large'), {
      status: 413,
      expose: true,
    });
    expect(filter.resolve(tooLarge, request)).toMatchObject({
      status: 413,
      code: 'payload_too_large',
    });
  });
});
