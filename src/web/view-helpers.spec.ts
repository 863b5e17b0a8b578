import { describe, expect, it } from '@jest/globals';
import { relativeTime, VIEW_HELPERS } from './view-helpers.js';

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const MIN = 60_000;

describe('relativeTime', () => {
  it.each([
    [NOW - 10_000, 'just now'],
    [NOW - 3 * MIN, '3 minutes ago'],
    [NOW - 60 * MIN, '60 minutes ago'],
    [NOW - 2 * 60 * MIN, '2 hours ago'],
    [NOW - 30 * 60 * MIN, '30 hours ago'],
    [NOW - 3 * 24 * 60 * MIN, '3 days ago'],
    [NOW - 90 * 24 * 60 * MIN, 'on 2026-08-26'],
    [NOW + 5 * MIN, 'in 5 minutes'],
    [NOW + 24 * 60 * MIN, 'in 24 hours'],
    [NOW + 7 * 24 * 60 * MIN, 'in 7 days'],
    [NOW - MIN, '1 minute ago'],
  ])('should say %s as "%s"', (at, words) => {
    expect(relativeTime(at, NOW)).toBe(words);
  });
});

describe('breakableEmail', () => {
  it.each([
    ['ada.lovelace@example.com', 'ada<wbr>.lovelace@<wbr>example<wbr>.com'],
    [
      'averyveryveryverylongemailaddressthatgoesonandon.forever@sub.example-long-domain-name.com',
      'averyveryveryver<wbr>ylongemailaddres<wbr>sthatgoesonandon<wbr>.forever@<wbr>sub<wbr>.example-long-dom<wbr>ain-name<wbr>.com',
    ],
    ['<b>"x"@example.com', '&lt;b&gt;&quot;x&quot;@<wbr>example<wbr>.com'],
    ['no-at-sign', 'no-at-sign'],
  ])('should let %s break only where it says', (address, html) => {
    expect(VIEW_HELPERS.breakableEmail(address).toString()).toBe(
      `<span class="email">${html}</span>`,
    );
  });
});

describe('breakableName', () => {
  it.each([
    ['Ada Lovelace', 'Ada Lovelace'],
    [
      'Maximilian Alexander Featherstonehaugh-Worthington',
      'Maximilian Alexander Featherstonehaug<wbr>h-Worthington',
    ],
    [
      'Wolfeschlegelsteinhausenbergerdorff <x>',
      'Wolfeschlegelste<wbr>inhausenbergerdo<wbr>rff &lt;x&gt;',
    ],
    ['', ''],
  ])('should let %s break only in a word of more than 20 characters', (name, html) => {
    expect(VIEW_HELPERS.breakableName(name).toString()).toBe(html);
  });
});

describe('withCode', () => {
  it.each([
    [
      'A token was revoked; `reason` says why: `person` or `expiry`.',
      'A token was revoked; <code>reason</code> says why: <code>person</code> or <code>expiry</code>.',
    ],
    ['No code at all.', 'No code at all.'],
    ['`<b>` & <i>', '<code>&lt;b&gt;</code> &amp; &lt;i&gt;'],
    ['An odd ` backtick', 'An odd &#x60; backtick'],
  ])('should show %s with its backticks as code, and escape the rest', (text, html) => {
    expect(VIEW_HELPERS.withCode(text).toString()).toBe(html);
  });
});
