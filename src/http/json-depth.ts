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

/**
 * A body with text that is not Unicode: a lone UTF-16 surrogate (`"\ud800"`), which JSON's
 * grammar lets through and I-JSON (RFC 7493) forbids. No field could hold it, and validators that
 * encode text (as URLs do) throw on it.
 */
export class IllFormedTextError extends DomainError {
  readonly code = 'bad_request';
  constructor() {
    super('The body has text that is not Unicode (a lone surrogate, such as \\ud800).');
  }
}

// Read as code points (the u flag), a surrogate is a character only when it has no partner.
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether a key or string anywhere in `value` is not well-formed Unicode; walked without recursion. */
export function hasIllFormedText(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (LONE_SURROGATE.test(node)) return true;
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, child] of Object.entries(node)) {
        if (LONE_SURROGATE.test(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}
