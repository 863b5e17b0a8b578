import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { SecretCipher, UnreadableSecretError } from './secret-cipher.js';

async function cipherWith(sessionSecret: string): Promise<SecretCipher> {
  const moduleRef = await Test.createTestingModule({
    providers: [SecretCipher, { provide: CONFIG, useValue: { web: { sessionSecret } } as Config }],
  }).compile();
  return moduleRef.get(SecretCipher);
}

describe('SecretCipher', () => {
  const key = 'k8Vf1r2Qm9Zt4Lw7Xc0Ny3Bh6Jd5Sg1Pa8Ue2Io4';

  it('should give back the secret when opened with the same key and context', async () => {
    const cipher = await cipherWith(key);
    const sealed = cipher.encrypt('JBSWY3DPEHPK3PXP', 'two-factor:7');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(cipher.decrypt(sealed, 'two-factor:7')).toBe('JBSWY3DPEHPK3PXP');
  });

  it('should seal the same secret differently each time', async () => {
    const cipher = await cipherWith(key);
    expect(cipher.encrypt('JBSWY3DPEHPK3PXP', 'x')).not.toBe(
      cipher.encrypt('JBSWY3DPEHPK3PXP', 'x'),
    );
  });

  it('should refuse to open a secret under another context, another key, or altered', async () => {
    const cipher = await cipherWith(key);
    const sealed = cipher.encrypt('JBSWY3DPEHPK3PXP', 'two-factor:7');
    expect(() => cipher.decrypt(sealed, 'two-factor:8')).toThrow(UnreadableSecretError);
    const other = await cipherWith(`${key}-rotated`);
    expect(() => other.decrypt(sealed, 'two-factor:7')).toThrow(UnreadableSecretError);
    const flipped = sealed.slice(0, -2) + (sealed.endsWith('AA') ? 'AB' : 'AA');
    expect(() => cipher.decrypt(flipped, 'two-factor:7')).toThrow(UnreadableSecretError);
    expect(() => cipher.decrypt('JBSWY3DPEHPK3PXP', 'two-factor:7')).toThrow(UnreadableSecretError);
  });
});
