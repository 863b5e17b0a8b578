import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AbilityCatalog,
  BUILT_IN_ABILITIES,
  MAX_DEPLOYMENT_ABILITIES,
} from './abilities.config.js';
import { ConfigError, loadConfig } from './config.js';

const scratch = mkdtempSync(join(tmpdir(), 'tessera-abilities-'));

/** An abilities file holding `content`, and the configuration read with it. */
function withFile(content: unknown, raw = false) {
  const path = join(scratch, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, raw ? String(content) : JSON.stringify(content));
  return load(path);
}

function load(path: string) {
  return loadConfig({ SESSION_SECRET_FILE: join(scratch, 'secret'), ABILITIES_FILE: path });
}

/** The problems loading the configuration reports. */
function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('the configuration was taken');
}

describe('the ability catalog', () => {
  it("should offer Tessera's own abilities when ABILITIES_FILE is not set", () => {
    const { abilities } = loadConfig({ SESSION_SECRET_FILE: join(scratch, 'secret') });
    expect(abilities.names()).toEqual(BUILT_IN_ABILITIES.map((a) => a.name));
    expect(abilities.defaults()).toEqual(['user:read', 'team:read']);
  });

  it("should add the file's abilities after Tessera's own, with their descriptions and defaults", () => {
    const { abilities } = withFile([
      { name: 'invoices:write', description: ' Create invoices. ', default: true },
      { name: 'invoices:read', description: 'Read invoices.' },
    ]);
    expect(abilities.names().slice(-2)).toEqual(['invoices:write', 'invoices:read']);
    expect(abilities.get('invoices:write')).toEqual({
      name: 'invoices:write',
      description: 'Create invoices.',
      default: true,
    });
    expect(abilities.defaults()).toEqual(['user:read', 'team:read', 'invoices:write']);
  });

  it('should refuse to start when the file is not there, is not JSON or is not a list', () => {
    expect(problemsOf(() => load(join(scratch, 'missing.json')))).toEqual([
      `ABILITIES_FILE="${join(scratch, 'missing.json')}": there is no such file`,
    ]);
    expect(problemsOf(() => withFile('[{"name":', true))[0]).toMatch(/: is not JSON \(/);
    expect(problemsOf(() => withFile({ name: 'a:b' }))[0]).toMatch(/: must be a JSON array/);
  });

  it('should name every bad entry: a name not of the form resource:action, a duplicate, a built-in, a field too many', () => {
    const problems = problemsOf(() =>
      withFile([
        { name: 'Invoices', description: 'No action.' },
        { name: 'invoices:write', description: 'Create invoices.' },
        { name: 'invoices:write', description: 'Again.' },
        { name: 'team:read', description: 'Ours.' },
        { name: 'reports:read', description: '' },
        { name: 'reports:export', description: 'Export.', default: 'yes' },
        { name: 'reports:share', description: 'Share.', scope: 'team' },
        'billing:read',
      ]),
    ).map((p) => p.replace(/^ABILITIES_FILE="[^"]+": /, ''));
    expect(problems).toEqual([
      'entry 1 ("Invoices") needs a "name" of the form resource:action (lower-case letters, digits, "_" and "-")',
      'entry 3 ("invoices:write") names an ability listed before it',
      'entry 4 ("team:read") names one of Tessera\'s own abilities',
      'entry 5 ("reports:read") needs a "description" of 1 to 300 characters',
      'entry 6 ("reports:export") has a "default" that is not true or false',
      'entry 7 ("reports:share") has fields it may not: scope',
      'entry 8 must be an object with "name", "description" and "default"',
    ]);
  });

  it('should take at most a bounded number of entries', () => {
    const many = Array.from({ length: MAX_DEPLOYMENT_ABILITIES + 1 }, (_, i) => ({
      name: `r${i}:read`,
      description: 'Read.',
    }));
    expect(problemsOf(() => withFile(many))[0]).toMatch(
      new RegExp(
        `has ${MAX_DEPLOYMENT_ABILITIES + 1} entries; at most ${MAX_DEPLOYMENT_ABILITIES}`,
      ),
    );
  });

  it('should tell the abilities a token holds that the catalog offers from those it no longer does', () => {
    const catalog = new AbilityCatalog(BUILT_IN_ABILITIES);
    expect(catalog.offered(['team:read', 'invoices:write', 'user:read'])).toEqual([
      'user:read',
      'team:read',
    ]);
    expect(catalog.retired(['team:read', 'invoices:write'])).toEqual(['invoices:write']);
  });
});
