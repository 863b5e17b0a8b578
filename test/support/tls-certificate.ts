import { execFileSync } from 'node:child_process';
import { isIP } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsCertificate {
  key: string;
  cert: string;
}

/**
 * A self-signed certificate for `name` (a host name, or an IP address), made with the system's
 * openssl, valid for a day.
 */
export function selfSignedCertificate(name: string): TlsCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-tls-'));
  try {
    const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${name}`,
        '-addext',
        `subjectAltName=${isIP(name) ? 'IP' : 'DNS'}:${name}`,
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
