import type { Config } from '../config/config.js';

/** Who passkeys are made for: the site's host (the RP id) and the origin the browser reports. */
export interface RelyingParty {
  id: string;
  name: string;
  origin: string;
}

/** From APP_URL: passkeys made for one address do not work on another. */
export function relyingPartyOf(config: Config): RelyingParty {
  const url = new URL(config.app.publicUrl);
  return { id: url.hostname, name: 'Tessera', origin: url.origin };
}
