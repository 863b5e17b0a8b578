import { randomBytes } from 'node:crypto';

export const SLUG_MAX = 60;

/** A URL-style short name: lower-case ASCII letters, digits and single dashes. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/['’]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
  return slug || 'team';
}

/** The base itself if free, else the first `base-N` (N ≥ 2) not among the taken slugs. */
export function nextFreeSlug(base: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}

/** The base with a random suffix (24 bits): for when the next numbered slug is being contested. */
export function randomSlug(base: string): string {
  return `${base}-${randomBytes(3).toString('hex')}`;
}
