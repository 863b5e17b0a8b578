import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { EnvReader } from './env-reader.js';
import { parseConfiguredEndpoints, readWebhooksConfig } from './webhooks.config.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const endpoint = (fields: Record<string, unknown> = {}) => ({
  url: 'https://hooks.example.com/tessera',
  events: ['token.revoked', 'member.joined'],
  secret,
  ...fields,
});

describe('WEBHOOK_ENDPOINTS', () => {
  it('should read nothing to manage when unset, and none when set to an empty list', () => {
    expect(parseConfiguredEndpoints('')).toBeNull();
    expect(parseConfiguredEndpoints('[]')).toEqual([]);
  });

  it('should read each endpoint with its url, events and secret', () => {
    const second = endpoint({ url: 'https://audit.example.net/in', events: ['token.created'] });
    expect(parseConfiguredEndpoints(JSON.stringify([endpoint(), second]))).toEqual([
      endpoint(),
      second,
    ]);
  });

  it.each([
    ['not JSON', 'https://hooks.example.com', /must be a JSON array such as/],
    ['an object, not a list', JSON.stringify(endpoint()), /must be a JSON array/],
    ['a string item', JSON.stringify(['https://x.example']), /endpoint 1 must be an object/],
    ['another field', JSON.stringify([endpoint({ team: 'a' })]), /endpoint 1 has team: only/],
    ['no url', JSON.stringify([endpoint({ url: undefined })]), /endpoint 1: url must be an https/],
    ['ftp', JSON.stringify([endpoint({ url: 'ftp://x.example/' })]), /url must be an https/],
    [
      'a url of 2048 characters encoded to more',
      JSON.stringify([endpoint({ url: `https://x.example/${'é'.repeat(700)}` })]),
      /url must be an https.* of at most 2048 characters/,
    ],
    [
      'a password in the url',
      JSON.stringify([endpoint({ url: 'https://u:p@x.example/' })]),
      /must not hold a user name or password/,
    ],
    ['no events', JSON.stringify([endpoint({ events: [] })]), /events must be a list/],
    ['events as text', JSON.stringify([endpoint({ events: 'token.revoked' })]), /events must/],
    ['a short secret', JSON.stringify([endpoint({ secret: 'whsec_c2hvcnQ=' })]), /24 to 64 bytes/],
    [
      'a secret without its prefix',
      JSON.stringify([endpoint({ secret: secret.slice(6) })]),
      /secret must be "whsec_"/,
    ],
    [
      'a URL twice',
      JSON.stringify([endpoint(), endpoint({ events: ['member.joined'] })]),
      /endpoint 2 \(https:\/\/hooks.example.com\/tessera\): the URL is listed twice/,
    ],
  ])('should refuse %s, saying which endpoint', (_name, raw, message) => {
    const parsed = parseConfiguredEndpoints(raw);
    expect(parsed).toEqual({ error: expect.stringMatching(message) });
  });

  it('should name the variable at start without printing its value, which holds secrets', () => {
    const reader = new EnvReader({
      WEBHOOK_ENDPOINTS: JSON.stringify([endpoint(), endpoint({ events: ['nope'] })]),
    });
    readWebhooksConfig(reader, 'production');
    expect(reader.problems).toEqual([
      'WEBHOOK_ENDPOINTS="(not shown)": endpoint 2 (https://hooks.example.com/tessera): events must be a list of event names such as "token.revoked"',
    ]);
    expect(reader.problems.join('')).not.toContain(secret.slice(6));
  });
});
