/**
 * Which rows a page of a list holds: up to `limit`, those whose key comes after `after` in the
 * list's order (from the start without it). Lists read one row more than the limit, so the
 * caller knows whether another page follows.
 */
export interface KeysetPage {
  after?: number;
  limit: number;
}
