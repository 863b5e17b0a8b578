import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const VIEWS = join(import.meta.dirname, '..', '..', 'views');

/** Every template, with its path under views/. */
function templates(): [string, string][] {
  return readdirSync(VIEWS, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.hbs'))
    .map((file) => [file, readFileSync(join(VIEWS, file), 'utf8')]);
}

describe('the page templates', () => {
  it('should point each field they mark invalid at its message, for screen readers', () => {
    const unlinked: string[] = [];
    for (const [file, text] of templates()) {
      for (const tag of text.match(/<(input|select|textarea)\b[^>]*>/g) ?? []) {
        for (const [, name] of tag.matchAll(
          /\{\{#if \(fieldError '([a-z_]+)'\)\}\}aria-invalid/g,
        )) {
          if (!tag.includes(`${name}-error`)) unlinked.push(`${file}: ${name}`);
        }
      }
    }
    expect(unlinked).toEqual([]);
  });
});
