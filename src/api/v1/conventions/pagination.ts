import {
  Inject,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { map, type Observable } from 'rxjs';
import type { Clock } from '../../../clock/clock.js';
import { ValidationError } from '../../../common/errors/domain.error.js';
import { page, type PageEnvelope } from '../../../common/http/envelope.js';
import type { KeysetPage } from '../../../common/keyset-page.js';
import { ToInteger } from '../../../common/validation/transforms.js';
import type { Config } from '../../../config/config.js';
import { CONFIG } from '../../../config/config.module.js';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 100;

/** `?limit=&cursor=`: how many rows at most, and where the page before ended. */
export class PageQuery {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_LIMIT,
    default: DEFAULT_PAGE_LIMIT,
    description: 'Rows a page holds at most.',
  })
  @IsOptional()
  @ToInteger()
  @Max(MAX_PAGE_LIMIT, { message: `limit is at most ${MAX_PAGE_LIMIT}.` })
  @Min(1, { message: 'limit is at least 1.' })
  @IsInt({ message: `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}.` })
  limit: number = DEFAULT_PAGE_LIMIT;

  @ApiPropertyOptional({
    pattern: '^[A-Za-z0-9_-]{1,64}$',
    description: 'Where to go on from: the `next` of the page before. Left out, the first page.',
  })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'cursor must be a `next` value of a page.' })
  @IsString({ message: 'cursor must be a `next` value of a page.' })
  cursor?: string;
}

/**
 * Cursors are opaque to clients: the list's name and the key of the last row a page held
 * (rows are read in a stable order of a unique key, so rows added between two pages are neither
 * skipped nor shown twice among those already there).
 */
export function encodeCursor(list: string, key: number): string {
  return Buffer.from(`${list}:${key}`).toString('base64url');
}

/** The key a cursor of `list` carries; undefined without one; any other is refused (422). */
export function decodeCursor(list: string, cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  // Keys are ids, written as `encodeCursor` writes them: no 0, no leading zero.
  const match = /^([a-z-]+):([1-9]\d{0,14})$/.exec(Buffer.from(cursor, 'base64url').toString());
  // Only the very text a page gave (base64url has other spellings of the same bytes).
  if (!match || match[1] !== list || encodeCursor(list, Number(match[2])) !== cursor) {
    throw new ValidationError({ cursor: 'cursor must be a `next` value of a page of this list.' });
  }
  return Number(match[2]);
}

/** The rows a page of `list` asks for: after its cursor's key, up to its limit. */
export function keysetOf(list: string, query: PageQuery): KeysetPage {
  return { after: decodeCursor(list, query.cursor), limit: query.limit };
}

/**
 * A page of `list` from rows read with one more than the limit: the rows it shows, and the
 * cursor of the next page when that extra row was there; stamped by `clock`.
 */
export function pageOf<Row, T>(
  clock: Clock,
  list: string,
  rows: Row[],
  query: PageQuery,
  keyOf: (row: Row) => number,
  view: (row: Row) => T,
): PageEnvelope<T> {
  const shown = rows.slice(0, query.limit);
  const more = rows.length > query.limit;
  return page(
    clock,
    shown.map(view),
    more ? encodeCursor(list, keyOf(shown[shown.length - 1])) : null,
  );
}

/**
 * Every list answers with its next page's address in a `Link: <…>; rel="next"` header (RFC
 * 8288) as well as in the envelope's `next`: the same query with that cursor, at APP_URL.
 */
@Injectable()
export class NextPageLink implements NestInterceptor {
  constructor(@Inject(CONFIG) private readonly config: Config) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    return next.handle().pipe(
      map((answer: PageEnvelope<unknown>) => {
        if (answer?.next) {
          const req = http.getRequest<Request>();
          const url = new URL(req.originalUrl, this.config.app.publicUrl);
          url.searchParams.set('cursor', answer.next);
          http.getResponse<Response>().setHeader('Link', `<${url.href}>; rel="next"`);
        }
        return answer;
      }),
    );
  }
}
