import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The project's root (where views/ and public/ live), found from src/ and from dist/src/ alike. */
function findRoot(start: string): string {
  for (let dir = start; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'views'))) return dir;
  }
  throw new Error(`No project root with views/ above ${start}`);
}

export const PROJECT_ROOT = findRoot(import.meta.dirname);
