import { describe, expect, it } from '@jest/globals';
import { nextFreeSlug, randomSlug, SLUG_MAX, slugify } from './slug.js';

describe('slugify', () => {
  it.each([
    ['Acme Corp', 'acme-corp'],
    ["Ada's Team", 'adas-team'],
    ['  Café Crème  ', 'cafe-creme'],
    ['R&D / Ops!!', 'r-d-ops'],
    ['🚀🚀', 'team'],
    ["'; DROP TABLE teams; --", 'drop-table-teams'],
  ])('should turn %j into %j', (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });

  it('should cut long names without a trailing dash', () => {
    const slug = slugify('a'.repeat(SLUG_MAX - 1) + ' bcd');
    expect(slug.length).toBeLessThanOrEqual(SLUG_MAX);
    expect(slug.endsWith('-')).toBe(false);
  });
});

describe('nextFreeSlug', () => {
  it('should keep the base when it is free and number it otherwise', () => {
    expect(nextFreeSlug('acme', [])).toBe('acme');
    expect(nextFreeSlug('acme', ['acme'])).toBe('acme-2');
    expect(nextFreeSlug('acme', ['acme', 'acme-2', 'acme-4'])).toBe('acme-3');
  });
});

describe('randomSlug', () => {
  it('should add six hex digits to the base, different each time', () => {
    const slugs = new Set(Array.from({ length: 50 }, () => randomSlug('acme')));
    expect(slugs.size).toBe(50);
    for (const slug of slugs) expect(slug).toMatch(/^acme-[0-9a-f]{6}$/);
  });
});
