/** Tokens a case may use: `valid` has every ability; `other` belongs to another person. */
export interface CaseTokens {
  valid: string;
  other: string;
}

export interface AuthorizationCase {
  name: string;
  /** The Authorization header to send; undefined sends none. */
  header: (tokens: CaseTokens) => string | undefined;
  status: 200 | 401;
  code?: 'missing_token' | 'invalid_token';
  /** Refused from the header alone: no database query is needed to say no. */
  refusedWithoutQuery?: true;
  /** Bytes an HTTP client library would not send: the case needs a raw socket. */
  raw?: true;
}

const changeOne = (token: string, at: number) =>
  token.slice(0, at) + (token[at] === 'a' ? 'b' : 'a') + token.slice(at + 1);

/**
 * The one list of Authorization headers the API, hostile-input and property specs check the
 * profile endpoint with: RFC 6750's bearer scheme, case-insensitive, one or more spaces, one
 * token, nothing else; only the header counts.
 */
export const AUTHORIZATION_CASES: AuthorizationCase[] = [
  { name: 'no Authorization header', header: () => undefined, status: 401, code: 'missing_token' },
  { name: 'an empty header', header: () => '', status: 401, code: 'missing_token' },
  {
    name: 'Basic credentials',
    header: () => 'Basic dXNlcjpwYXNz',
    status: 401,
    code: 'missing_token',
  },
  {
    name: 'another scheme with a valid token',
    header: (t) => `Token ${t.valid}`,
    status: 401,
    code: 'missing_token',
  },
  ...(<[string, (t: CaseTokens) => string][]>[
    ['the scheme alone', () => 'Bearer'],
    ['the scheme and a space', () => 'Bearer '],
    ['a malformed token', () => 'Bearer not-a-token'],
    ['a tab after the scheme', (t) => `Bearer\t${t.valid}`],
    ['trailing garbage', (t) => `Bearer ${t.valid} garbage`],
    ['two tokens', (t) => `Bearer ${t.valid} ${t.valid}`],
    ['two comma-separated credentials', (t) => `Bearer ${t.valid}, Bearer ${t.other}`],
    ['one character changed in the random part', (t) => `Bearer ${changeOne(t.valid, 10)}`],
    ['one character changed in the checksum', (t) => `Bearer ${changeOne(t.valid, 38)}`],
    ['the prefix in capitals', (t) => `Bearer TSR_${t.valid.slice(4)}`],
    ['a token 8 KB long', () => `Bearer tsr_${'a'.repeat(8 * 1024)}`],
    ['SQL in the token', () => "Bearer ' OR '1'='1"],
  ]).map(([name, header]): AuthorizationCase => ({
    name,
    header,
    status: 401,
    code: 'invalid_token',
    refusedWithoutQuery: true,
  })),
  {
    name: 'non-ASCII bytes',
    header: () => 'Bearer tsr_\u00e9\u00e8\u00ff',
    status: 401,
    code: 'invalid_token',
    refusedWithoutQuery: true,
    raw: true,
  },
  { name: 'the usual header', header: (t) => `Bearer ${t.valid}`, status: 200 },
  { name: 'two spaces after the scheme', header: (t) => `Bearer  ${t.valid}`, status: 200 },
  { name: 'the scheme in lower case', header: (t) => `bearer ${t.valid}`, status: 200 },
  { name: 'the scheme in capitals', header: (t) => `BEARER ${t.valid}`, status: 200 },
  {
    name: "another person's valid token (answers for that person)",
    header: (t) => `Bearer ${t.other}`,
    status: 200,
  },
];
