import type { Passkey } from './passkey.entity.js';

/** Well-known authenticators by their AAGUID, so the page can say which one holds a passkey. */
const KNOWN_AUTHENTICATORS: Record<string, string> = {
  'ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4': 'Google Password Manager',
  'fbfc3007-154e-4ecc-8c0b-6e020557d7bd': 'Apple Passwords (iCloud Keychain)',
  'bada5566-a7aa-401f-bd96-45619a55120d': '1Password',
  'd548826e-79b4-db40-a3d8-11116f7e8349': 'Bitwarden',
  'adce0002-35bc-c60a-648b-0b25f1f05503': 'Chrome on Mac',
  '08987058-cadc-4b81-b6e1-30de50dcbe96': 'Windows Hello',
  '9ddd1817-af5a-4672-a2b9-3e3dd95000a9': 'Windows Hello',
  '6028b017-b1d4-4c02-b4b3-afcdafc96bb2': 'Windows Hello',
};

/** A passkey as the security page shows it: never its key. */
export interface PasskeyView {
  id: number;
  name: string;
  /** The authenticator, when it says which it is; else whether it is synced or on one device. */
  kind: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export function toView(passkey: Passkey): PasskeyView {
  const known = passkey.aaguid ? KNOWN_AUTHENTICATORS[passkey.aaguid] : undefined;
  const kind =
    known ?? (passkey.deviceType === 'multiDevice' ? 'Synced passkey' : 'Passkey on one device');
  return {
    id: passkey.id,
    name: passkey.name,
    kind,
    createdAt: passkey.createdAt,
    lastUsedAt: passkey.lastUsedAt,
  };
}
