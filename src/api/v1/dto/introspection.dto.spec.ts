import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { WAIT_TIMEOUT_MS } from '../../../../test/support/wait-for.js';
import { ABILITY_LIST } from './introspection.dto.js';

describe('ABILITY_LIST', () => {
  it.each(['', 'tokens:read', ' invoices:read  invoices:write ', 'a:b,c:d', 'a:b, c-d:e_f\n'])(
    'should take %j',
    (text) => expect(ABILITY_LIST.test(text)).toBe(true),
  );

  it.each(['a:bc:d', 'a:b:c', 'Tokens:read', 'a', ':b', 'a:b;c:d', `a:${'b'.repeat(41)}`])(
    'should refuse %j',
    (text) => expect(ABILITY_LIST.test(text)).toBe(false),
  );

  it('should refuse, in one pass, text that can be split between names in many ways', () => {
    // A pattern with optional separators took minutes on this (each `:aaaa` multiplied the ways
    // to split it), blocking the server. Checked in a process of its own, so that a pattern
    // that backtracks fails this test after WAIT_TIMEOUT_MS instead of hanging the runner.
    const hostile = `a${':aaaa'.repeat(390)}!`;
    expect(hostile.length).toBeLessThan(2000);
    const check = spawnSync(
      process.execPath,
      [
        '-e',
        'process.stdout.write(String(new RegExp(process.argv[1]).test(process.argv[2])))',
        ABILITY_LIST.source,
        hostile,
      ],
      { encoding: 'utf8', timeout: WAIT_TIMEOUT_MS },
    );
    expect(check.stdout).toBe('false');
  });
});
