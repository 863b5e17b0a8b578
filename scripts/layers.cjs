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
    'webhooks',
  ],
  // Above them all: pages over several of those, the API, upkeep, the command line.
  ['team-page', 'dashboard', 'api', 'health', 'maintenance', 'cli'],
];

module.exports = { LAYERS };
