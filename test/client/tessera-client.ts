import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './tessera-api.js';

/** A client of Tessera's API, typed by the OpenAPI document the server serves. */
export type TesseraClient = Client<paths>;

/** The client an automation would make: the deployment's address and its token. */
export function tesseraClient(baseUrl: string, token: string): TesseraClient {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
}
