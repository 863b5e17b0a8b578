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
  // Who is there: sessions, CSRF, the guard, sudo mode, the actor.
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
  // The HTTP server the page and API doors stand on: Express's adapter, the exception filter,
  // the JSON answer, the security headers, compression.
  ['http'],
  // The doors, above them all: the pages, the API, the command line; and upkeep.
  ['api', 'web', 'health', 'maintenance', 'cli'],
];

/**
 * The doors, and the HTTP server under the page and API doors: only they (and the app's own
 * files in src/) speak HTTP through Express.
 */
const DOORS = ['web', 'api', 'cli', 'http'];

/**
 * Files below the doors that still import Express (its Request and Response, the session): what
 * the session holds and who acts (auth/), the request log, the per-route limit's guard and the
 * secret scanners' report route. No file
 * may join the list; a file leaves it when it moves to a door or takes what it needs as
 * arguments.
 */
const STILL_ON_EXPRESS = [
  'src/auth/access.ts',
  'src/auth/access.spec.ts',
  'src/auth/page-session.ts',
  'src/logging/request-log.ts',
  'src/rate-limit/route-limit.guard.ts',
  'src/token-reports/signed-report.decorator.ts',
  'src/token-reports/token-reports.module.ts',
];

module.exports = { LAYERS, DOORS, STILL_ON_EXPRESS };
