import { describe, expect, it } from '@jest/globals';
import { normalizeEmail } from './email.js';

describe('normalizeEmail', () => {
  it('should give every spelling of one mailbox one form: trimmed, lower-cased, composed, its domain in ASCII', () => {
    const forms = [
      'bob@xn--bcher-kva.example',
      ' Bob@Bücher.Example ',
      'bob@bu\u0308cher.example',
      'BOB@BÜCHER.EXAMPLE',
      'bob@ｂüｃｈｅｒ.example',
      'bob@bücher。example',
    ];
    expect(new Set(forms.map(normalizeEmail))).toEqual(new Set(['bob@xn--bcher-kva.example']));
  });

  it('should compose the part before the @ without changing its letters', () => {
    expect(normalizeEmail('Zoe\u0308@example.com')).toBe('zoë@example.com');
    expect(normalizeEmail('zoë@example.com')).not.toBe(normalizeEmail('zoe@example.com'));
  });

  it('should be its own form: normalizing twice changes nothing', () => {
    for (const email of ['İnci@Bücher.example', 'a@faß.de', 'x@exa mple.com', 'no-at-sign']) {
      expect(normalizeEmail(normalizeEmail(email))).toBe(normalizeEmail(email));
    }
  });

  it('should leave a domain IDNA refuses as typed, for validation to refuse', () => {
    expect(normalizeEmail('A@Exa mple.com')).toBe('a@exa mple.com');
    expect(normalizeEmail('a@[127.0.0.1]')).toBe('a@[127.0.0.1]');
    expect(normalizeEmail('Not An Address')).toBe('not an address');
  });
});
