import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../config/config.js';
import {
  AddressPolicy,
  RefusedAddressError,
  urlFormProblem,
  WebhookResolver,
  type ResolvedAddress,
} from './address-policy.js';

/** A resolver that answers from a table, so that no name is looked up. */
class TableResolver extends WebhookResolver {
  constructor(private readonly table: Record<string, ResolvedAddress[]>) {
    super();
  }
  override resolve(host: string): Promise<ResolvedAddress[]> {
    const found = this.table[host];
    return found ? Promise.resolve(found) : Promise.reject(new Error('ENOTFOUND'));
  }
}

const policy = (env: Record<string, string> = {}) =>
  new AddressPolicy(
    loadConfig({ NODE_ENV: 'test', ...env }),
    new TableResolver({
      'hooks.example': [{ address: '93.184.215.14', family: 4 }],
      'inside.example': [{ address: '10.1.2.3', family: 4 }],
      'mixed.example': [
        { address: '::ffff:a00:1', family: 6 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
    }),
  );

describe('AddressPolicy', () => {
  describe('parse', () => {
    it('should give the URL of a well-formed address', () => {
      expect(policy().parse('https://hooks.example:8443/in?x=1').href).toBe(
        'https://hooks.example:8443/in?x=1',
      );
    });

    it.each([
      ['not a url', 'is not a URL'],
      ['ftp://hooks.example/', 'must start with https://'],
      ['https://me:secret@hooks.example/', 'must not carry a user name or password'],
      ['https://hooks.example:0/', 'must not name port 0'],
    ])('should refuse %s, saying it %s, as the forms do', (raw, problem) => {
      expect(() => policy().parse(raw)).toThrow(new RefusedAddressError(problem));
      expect(urlFormProblem(raw)).toBe(problem);
    });
  });

  describe('addressFor', () => {
    it('should connect to the address the name resolves to', async () => {
      const url = policy().parse('https://hooks.example/');
      await expect(policy().addressFor(url)).resolves.toEqual({
        address: '93.184.215.14',
        family: 4,
      });
    });

    it('should refuse a name that resolves to a private address, naming it', async () => {
      const url = policy().parse('https://inside.example/');
      await expect(policy().addressFor(url)).rejects.toThrow(
        'resolves to 10.1.2.3: a loopback, private, link-local or reserved address',
      );
    });

    it('should judge an IPv4 address written as IPv6 as IPv4, and take the next acceptable one', async () => {
      const url = policy().parse('https://mixed.example/');
      await expect(policy().addressFor(url)).resolves.toEqual({
        address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c',
        family: 6,
      });
      await expect(
        policy().addressFor(policy().parse('https://[::ffff:127.0.0.1]/')),
      ).rejects.toThrow(RefusedAddressError);
    });

    it.each([
      '[::7f00:1]',
      '[::1.2.3.4]',
      '[::ffff:0:7f00:1]',
      '[::]',
      '[2002:7f00:1::]',
      '[2001::1]',
      '[fec0::1]',
      '[3fff::1]',
    ])(
      'should refuse %s, an IPv6 form that carries or stands for a refused address',
      async (host) => {
        await expect(policy().addressFor(policy().parse(`https://${host}/`))).rejects.toThrow(
          RefusedAddressError,
        );
      },
    );

    it('should let plain HTTP go only to WEBHOOK_ALLOWED_RANGES', async () => {
      const url = policy().parse('http://hooks.example/');
      await expect(policy().addressFor(url)).rejects.toThrow('must start with https://');
      const inside = policy({ WEBHOOK_ALLOWED_RANGES: '10.0.0.0/8' });
      await expect(inside.addressFor(inside.parse('http://inside.example/'))).resolves.toEqual({
        address: '10.1.2.3',
        family: 4,
      });
    });

    it('should say a name that does not resolve', async () => {
      await expect(policy().addressFor(policy().parse('https://nowhere.example/'))).rejects.toThrow(
        'names a host that does not resolve (nowhere.example)',
      );
    });
  });
});
