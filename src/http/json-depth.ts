import { DomainError } from '../common/errors/domain.error.js';

/**
 * The deepest a request body's JSON may nest. The deepest body anything reads is three levels
 * (an object holding a list of strings); validation and the idempotency hash walk a body
 * recursively, and a body nested thousands deep (a few KB) would exhaust the stack there.
 */
export const MAX_BODY_DEPTH = 32;

export class BodyTooDeepError extends DomainError {
  readonly code = 'bad_request';
  constructor() {
    super(`The body is nested more than ${MAX_BODY_DEPTH} levels deep.`);
  }
}

/** Whether `value` nests objects or arrays more than `max` deep; walked without recursion. */
export function nestedDeeperThan(value: unknown, max = MAX_BODY_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) return true;
    for (const child of Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
