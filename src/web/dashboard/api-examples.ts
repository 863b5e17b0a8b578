/** One endpoint of the API as the "Use the API" page shows it: a line of curl that calls it. */
export interface ApiExample {
  method: string;
  path: string;
  summary: string;
  curl: string;
}

/**
 * The API's endpoints (the OpenAPI document at /api/v1/openapi.json describes each; a test holds
 * this list to it), each with a body where it takes one.
 */
const ENDPOINTS: [method: string, path: string, summary: string, body?: string][] = [
  ['GET', '/user/profile', "The token owner's profile"],
  ['GET', '/user/teams', "The token owner's teams"],
  ['GET', '/team', 'The team the token acts in'],
  ['GET', '/team/members', "The team's members"],
  ['PATCH', '/team/members/42', "Change a member's role", '{"role":"admin"}'],
  ['DELETE', '/team/members/42', 'Remove a member'],
  ['GET', '/team/invitations', "The team's invitations waiting for an answer"],
  [
    'POST',
    '/team/invitations',
    'Invite someone to the team',
    '{"email":"grace@example.com","role":"member"}',
  ],
  ['DELETE', '/team/invitations/42', 'Withdraw an invitation'],
  ['GET', '/team/tokens', "The team's token inventory"],
  ['GET', '/team/audit-log', "The team's audit log"],
  ['GET', '/token', 'The presented token'],
  [
    'POST',
    '/introspect',
    'Check a token presented to another service of the team (RFC 7662)',
    '{"token":"tsr_…"}',
  ],
];

/** Each endpoint with its curl line, against the API at `base` (the app's own address). */
export function apiExamples(base: string): ApiExample[] {
  return ENDPOINTS.map(([method, path, summary, body]) => {
    const parts = ['curl'];
    if (method !== 'GET') parts.push(`-X ${method}`);
    parts.push('-H "Authorization: Bearer $TOKEN"');
    if (body) parts.push(`-H "Content-Type: application/json" -d '${body}'`);
    parts.push(`${base}/api/v1${path}`);
    return { method, path: `/api/v1${path}`, summary, curl: parts.join(' ') };
  });
}
