import { createHash, createPublicKey, type KeyObject } from 'node:crypto';

/** A key a secret scanner signs its token reports with, by the identifier its requests name. */
export interface TokenReportKey {
  /** Lower-case hex, as GitHub's `Github-Public-Key-Identifier` header carries it. */
  id: string;
  key: KeyObject;
}

const BEGIN = '-----BEGIN PUBLIC KEY-----';
const END = '-----END PUBLIC KEY-----';
const PEM_BLOCK = new RegExp(`${BEGIN}[\\s\\S]*?${END}`, 'g');
const KEY_ID = /^[0-9a-f]{1,128}$/i;

/**
 * TOKEN_REPORT_PUBLIC_KEYS: the document GitHub publishes at
 * https://api.github.com/meta/public_keys/secret_scanning, as it is, or one or more PEM blocks
 * (literal `\n` read as line breaks, for one-line variables). A PEM block's identifier is
 * GitHub's own: the SHA-256, in hex, of the key's PEM text as OpenSSL writes it (64 characters
 * a line, a final newline), which gives the published identifier of each of GitHub's keys.
 * Empty: no keys, and reports are not taken.
 */
export function parseTokenReportKeys(raw: string): TokenReportKey[] | { error: string } {
  if (raw === '') return [];
  return raw.startsWith('{') ? fromDocument(raw) : fromPemBlocks(raw.replaceAll('\\n', '\n'));
}

/** The identifier GitHub gives a key: the SHA-256 of its PEM text. */
export function keyIdentifierOf(key: KeyObject): string {
  const pem = key.export({ type: 'spki', format: 'pem' });
  return createHash('sha256').update(pem).digest('hex');
}

function fromPemBlocks(raw: string): TokenReportKey[] | { error: string } {
  const blocks = raw.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0 || raw.replace(PEM_BLOCK, '').trim() !== '') {
    return {
      error:
        'must be the JSON GitHub publishes at https://api.github.com/meta/public_keys/secret_scanning, or PEM public keys (-----BEGIN PUBLIC KEY-----) and nothing else',
    };
  }
  const keys: TokenReportKey[] = [];
  for (const [i, block] of blocks.entries()) {
    const key = p256Key(rewrapped(block), `key ${i + 1}`);
    if ('error' in key) return key;
    keys.push({ id: keyIdentifierOf(key.key), key: key.key });
  }
  return keys;
}

/** A PEM block with its base64 in lines of 64, however it was pasted (on one line, say). */
function rewrapped(block: string): string {
  const base64 = block.slice(BEGIN.length, -END.length).replace(/\s+/g, '');
  return `${BEGIN}\n${base64.replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n${END}\n`;
}

function fromDocument(raw: string): TokenReportKey[] | { error: string } {
  let document: unknown;
  try {
    document = JSON.parse(raw);
  } catch {
    return { error: 'is not valid JSON' };
  }
  const list = (document as { public_keys?: unknown }).public_keys;
  if (!Array.isArray(list) || list.length === 0) {
    return { error: 'must hold "public_keys": a list of {"key_identifier", "key"}' };
  }
  const keys: TokenReportKey[] = [];
  for (const [i, entry] of (list as unknown[]).entries()) {
    const { key_identifier: id, key: pem } = (entry ?? {}) as Record<string, unknown>;
    const where = `public_keys[${i}]`;
    if (typeof id !== 'string' || !KEY_ID.test(id)) {
      return { error: `${where}.key_identifier must be the key's identifier in hex` };
    }
    if (typeof pem !== 'string') return { error: `${where}.key must be a PEM public key` };
    const key = p256Key(pem, where);
    if ('error' in key) return key;
    if (keys.some((k) => k.id === id.toLowerCase())) {
      return { error: `${where}: the identifier ${id} is given twice` };
    }
    keys.push({ id: id.toLowerCase(), key: key.key });
  }
  return keys;
}

/** Only ECDSA P-256 keys: GitHub signs with ECDSA-NIST-P256V1-SHA256. */
function p256Key(pem: string, where: string): { key: KeyObject } | { error: string } {
  let key: KeyObject;
  try {
    // Only a public key's block: createPublicKey would also take a private key or a certificate.
    if (!pem.trim().startsWith(BEGIN)) throw new Error('not a public key');
    key = createPublicKey(pem);
  } catch {
    return { error: `${where} is not a readable PEM public key` };
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    return { error: `${where} is not an ECDSA P-256 key` };
  }
  return { key };
}
