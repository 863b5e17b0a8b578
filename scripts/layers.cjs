/**
 * The layers of src/, lowest first: a folder may import the folders of the layers below its own
 * (and of its own, where no cycle results). `.dependency-cruiser.cjs` enforces it in
 * `npm run lint`; `npm run docs:graph` draws it in docs/architecture.md.
 */
const LAYERS = [
  // Foundations: know no feature.
  [
    'common',
    'config',
    'clock',
    'logging',
    'metrics',
    'database',
    'events',
    'scheduler',
    'rate-limit',
    'mail',
  ],
  // What every feature builds on: accounts, one-time links, the security log's writer, notices.
  ['users', 'one-time-links', 'audit', 'security-notices'],
  // Who is there: passwords, the sessions' rows, the decisions of access.
  ['auth'],
  // The features.
  ['teams', 'tokens', 'email-verification', 'two-factor', 'passkeys'],
  // Pages and flows that combine features.
  [
    'sign-in',
    'account',
    'password-reset',
    'invitations',
    'security-log',
    'token-reports',
    'service-accounts',
    'team-tokens',
    'webhooks',
  ],
  // The HTTP server the page and API doors stand on: Express's adapter, who acts in a request and
  // the routes' guards, the request log, the exception filter, the JSON answer, the security
  // headers, compression.
  ['http'],
  // The doors, above them all: the pages, the API, the command line; and upkeep.
  ['api', 'web', 'health', 'maintenance', 'cli'],
];

/**
 * The doors, and the HTTP server under the page and API doors: only they (and the app's own
 * files in src/) speak HTTP through Express.
 */
const DOORS = ['web', 'api', 'cli', 'http'];

module.exports = { LAYERS, DOORS };
