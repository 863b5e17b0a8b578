import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config.js';
import { parseTokenReportKeys, type TokenReportKey } from './token-report-keys.js';

/** The two keys GitHub published at api.github.com/meta/public_keys/secret_scanning, with their ids. */
const GITHUB_KEYS = [
  {
    key_identifier: '90a421169f0a406205f1563a953312f0be898d3c7b6c06b681aa86a874555f4a',
    key: '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE9MJJHnMfn2+H4xL4YaPDA4RpJqUq\nkCmRCBnYERxZanmcpzQSXs1X/AljlKkbJ8qpVIW4clayyef9gWhFbNHWAA==\n-----END PUBLIC KEY-----\n',
    is_current: false,
  },
  {
    key_identifier: 'bcb53661c06b4728e59d897fb6165d5c9cda0fd9cdf9d09ead458168deb7518c',
    key: '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYAGMWO8XgCamYKMJS6jc/qgvSlAd\nAjPuDPRcXU22YxgBrz+zoN19MzuRyW87qEt9/AmtoNP5GrobzUvQSyJFVw==\n-----END PUBLIC KEY-----\n',
    is_current: true,
  },
];

const ids = (keys: TokenReportKey[] | { error: string }): string[] | { error: string } =>
  'error' in keys ? keys : keys.map((k) => k.id);

const ecKey = (namedCurve: string): string =>
  generateKeyPairSync('ec', { namedCurve }).publicKey.export({
    type: 'spki',
    format: 'pem',
  }) as string;

describe('parseTokenReportKeys', () => {
  it('should take no keys when TOKEN_REPORT_PUBLIC_KEYS is empty', () => {
    expect(parseTokenReportKeys('')).toEqual([]);
  });

  it("should take GitHub's published document as it is, by its key identifiers", () => {
    const document = JSON.stringify({ public_keys: GITHUB_KEYS }, null, 2);
    expect(ids(parseTokenReportKeys(document))).toEqual(GITHUB_KEYS.map((k) => k.key_identifier));
  });

  it("should give PEM blocks GitHub's identifiers when pasted without the document, however wrapped", () => {
    const [older, current] = GITHUB_KEYS.map((k) => k.key);
    expect(ids(parseTokenReportKeys(`${older}\n${current}`))).toEqual(
      GITHUB_KEYS.map((k) => k.key_identifier),
    );
    // On one line, with spaces or literal \n for its breaks: the same key, the same identifier.
    const [, base64] = /KEY-----\n([\s\S]*)\n-----END/.exec(current)!;
    const spaced = `-----BEGIN PUBLIC KEY----- ${base64.replaceAll('\n', ' ')} -----END PUBLIC KEY-----`;
    const escaped = current.trim().replaceAll('\n', '\\n');
    for (const oneLine of [spaced, escaped]) {
      expect(ids(parseTokenReportKeys(oneLine))).toEqual([GITHUB_KEYS[1].key_identifier]);
    }
  });

  it('should refuse what is not a P-256 public key, or not only keys, saying which', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    }) as string;
    expect(parseTokenReportKeys(rsa)).toEqual({ error: 'key 1 is not an ECDSA P-256 key' });
    expect(parseTokenReportKeys(ecKey('secp384r1'))).toEqual({
      error: 'key 1 is not an ECDSA P-256 key',
    });
    expect(
      parseTokenReportKeys(
        `${GITHUB_KEYS[0].key}-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----`,
      ),
    ).toEqual({ error: 'key 2 is not a readable PEM public key' });
    expect(parseTokenReportKeys(`${GITHUB_KEYS[0].key} and more`)).toMatchObject({
      error: expect.stringContaining('PEM public keys'),
    });
    expect(parseTokenReportKeys('90a4211:somekey')).toMatchObject({
      error: expect.stringContaining('must be the JSON GitHub publishes'),
    });
  });

  it('should refuse a document that is not JSON, has no keys, or whose entries are wrong', () => {
    const doc = (keys: unknown) => JSON.stringify({ public_keys: keys });
    const [first] = GITHUB_KEYS;
    expect(parseTokenReportKeys('{"public_keys": [')).toEqual({ error: 'is not valid JSON' });
    expect(parseTokenReportKeys(doc([]))).toMatchObject({
      error: expect.stringContaining('"public_keys"'),
    });
    expect(parseTokenReportKeys(doc([{ ...first, key_identifier: 'not hex' }]))).toEqual({
      error: "public_keys[0].key_identifier must be the key's identifier in hex",
    });
    const privateKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    expect(parseTokenReportKeys(doc([{ ...first, key: privateKey }]))).toEqual({
      error: 'public_keys[0] is not a readable PEM public key',
    });
    expect(
      parseTokenReportKeys(
        doc([first, { ...GITHUB_KEYS[1], key_identifier: first.key_identifier }]),
      ),
    ).toEqual({
      error: `public_keys[1]: the identifier ${first.key_identifier} is given twice`,
    });
  });

  it('should refuse to start with a bad TOKEN_REPORT_PUBLIC_KEYS, naming the variable', () => {
    const env = {
      SESSION_SECRET_FILE: join(mkdtempSync(join(tmpdir(), 'tessera-keys-')), 'secret'),
      TOKEN_REPORT_PUBLIC_KEYS: '-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----',
    };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(
      'TOKEN_REPORT_PUBLIC_KEYS="…": key 1 is not a readable PEM public key',
    );
    const config = loadConfig({ ...env, TOKEN_REPORT_PUBLIC_KEYS: GITHUB_KEYS[1].key });
    expect(config.security.tokenReportKeys.map((k) => k.id)).toEqual([
      GITHUB_KEYS[1].key_identifier,
    ]);
    expect(config.security.rateLimit.tokenReportsPerHour).toBe(600);
  });
});
