import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Actors } from '../src/common/actor.js';
import { hashToken } from '../src/tokens/token-format.js';
import { FIND_BY_HASH_SQL } from '../src/tokens/token-authenticator.js';
import { TokenRegenerationService } from '../src/tokens/token-regeneration.service.js';
import { createToken, createUser } from './factories/index.js';
import { createTestApp } from './support/test-app.js';

/**
 * An app with a token regenerated once (its current and its replaced value both still find it)
 * among others' tokens, so that no plan is chosen for an empty table.
 */
async function appWithRegeneratedToken() {
  const t = await createTestApp();
  for (let i = 0; i < 3; i++) await createToken(t.app, await createUser(t.app));
  const user = await createUser(t.app);
  const first = await createToken(t.app, user);
  const regenerated = await t.app
    .get(TokenRegenerationService)
    .regenerate(Actors.operator(user.id), first.token.id, 60);
  return { t, tokenId: first.token.id, replaced: first.plaintext, current: regenerated.plaintext };
}

/**
 * The one query every API request runs, as the database plans it: the token's id from one of its
 * two unique hash indexes, everything else by primary key. A plan that scans a table, or merges
 * index scans, costs every request (docs/PERFORMANCE.md, "The authentication query").
 */
describe('the authentication query', () => {
  let seeded: Awaited<ReturnType<typeof appWithRegeneratedToken>>;
  beforeAll(async () => (seeded = await appWithRegeneratedToken()));
  afterAll(() => seeded.t.close());

  const run = (hash: string): Promise<Record<string, unknown>[]> =>
    seeded.t.dataSource.query(FIND_BY_HASH_SQL, [hash, hash]);

  it('should find a token by its current value or by the value it replaced, and nothing else', async () => {
    const { current, replaced, tokenId } = seeded;
    const byCurrent = await run(hashToken(current));
    expect(byCurrent).toHaveLength(1);
    expect(Number(byCurrent[0].token_id)).toBe(tokenId);
    expect(byCurrent[0].token_hash).toBe(hashToken(current));

    // The replaced value finds the same token; its row's hash is the current one, which is how
    // the authenticator tells the two apart.
    const byReplaced = await run(hashToken(replaced));
    expect(byReplaced).toHaveLength(1);
    expect(Number(byReplaced[0].token_id)).toBe(tokenId);
    expect(byReplaced[0].token_hash).toBe(hashToken(current));

    expect(await run(hashToken(`${current.slice(0, -1)}x`))).toEqual([]);
  });

  it('should read the hash indexes alone and every table by its key, for either value', async () => {
    const { t, current, replaced } = seeded;
    for (const value of [current, replaced]) {
      const hash = hashToken(value);
      if (t.dataSource.options.type === 'better-sqlite3') {
        const plan = (
          (await t.dataSource.query(`EXPLAIN QUERY PLAN ${FIND_BY_HASH_SQL}`, [hash, hash])) as {
            detail: string;
          }[]
        ).map((step) => step.detail);
        expect(plan.filter((step) => /^SCAN\b/.test(step))).toEqual([]);
        expect(plan).toContain(
          'SEARCH personal_access_tokens USING COVERING INDEX UQ_personal_access_tokens_hash (token_hash=?)',
        );
        expect(plan).toContain(
          'SEARCH personal_access_tokens USING COVERING INDEX UQ_personal_access_tokens_previous_hash (previous_token_hash=?)',
        );
        expect(plan).toContain('SEARCH t USING INTEGER PRIMARY KEY (rowid=?)');
        expect(plan.join('\n')).not.toMatch(/MULTI-INDEX OR|AUTOMATIC|TEMP B-TREE/);
      } else {
        const plan = (await t.dataSource.query(`EXPLAIN ${FIND_BY_HASH_SQL}`, [hash, hash])) as {
          table: string | null;
          type: string | null;
          key: string | null;
        }[];
        // No scan of a table or an index, and no merge of index scans.
        expect(
          plan.filter((step) => ['ALL', 'index', 'index_merge', 'range'].includes(step.type!)),
        ).toEqual([]);
        expect(plan.find((step) => step.table === 't')).toMatchObject({
          type: 'const',
          key: 'PRIMARY',
        });
        const keys = plan.map((step) => step.key);
        expect(keys).toContain(
          value === current
            ? 'UQ_personal_access_tokens_hash'
            : 'UQ_personal_access_tokens_previous_hash',
        );
      }
    }
  });
});
