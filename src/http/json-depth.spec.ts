import { describe, expect, it } from '@jest/globals';
import { hasIllFormedText, MAX_BODY_DEPTH, nestedDeeperThan } from './json-depth.js';

/** `depth` levels of objects and arrays in turn, a string at the bottom. */
function nest(depth: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

describe('nestedDeeperThan', () => {
  it('should let a body as deep as the limit through and refuse one level more', () => {
    expect(nestedDeeperThan(nest(MAX_BODY_DEPTH))).toBe(false);
    expect(nestedDeeperThan(nest(MAX_BODY_DEPTH + 1))).toBe(true);
  });

  it('should find the deep branch beside shallow ones, and take scalars as depth 0', () => {
    expect(nestedDeeperThan({ a: 1, b: [2, 3], c: { d: nest(2) } }, 4)).toBe(false);
    expect(nestedDeeperThan({ a: 1, b: [2, 3], c: { d: nest(3) } }, 4)).toBe(true);
    for (const scalar of [null, 1, 'x', true, undefined]) {
      expect(nestedDeeperThan(scalar, 0)).toBe(false);
    }
  });

  it('should walk 100,000 levels without exhausting the stack', () => {
    expect(nestedDeeperThan(nest(100_000))).toBe(true);
  });
});

describe('hasIllFormedText', () => {
  it('should find a lone surrogate in a value or a key, at any depth, and pass paired ones', () => {
    expect(hasIllFormedText({ a: ['x', { b: '\u{1f9ee} abacus' }] })).toBe(false);
    expect(hasIllFormedText({ a: ['x', { b: '\ud800' }] })).toBe(true);
    expect(hasIllFormedText({ a: { '\udc00': 1 } })).toBe(true);
    expect(hasIllFormedText('\ud83e')).toBe(true);
    for (const scalar of [null, 1, 'x', true, undefined])
      expect(hasIllFormedText(scalar)).toBe(false);
  });
});
