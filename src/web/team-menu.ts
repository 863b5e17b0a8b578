import type { Request } from 'express';
import type { PersonSnapshot } from '../common/actor.js';
import { isReturnPage } from './return-to.js';

/** The team menu in a signed-in page's header, as `views/partials` draw it. */
export interface TeamMenu {
  current?: { id: number; name: string };
  /** The current team's name when it requires two-factor sign-in and the person has it off. */
  twoFactorRequired: string | null;
  others: { id: number; name: string }[];
  /** Where switching team from this page comes back to. */
  returnTo: string;
}

/**
 * The current team, the others to switch to, and the way back; and the reminder that the
 * current team requires two-factor sign-in, when it does and the person has not turned it on.
 * Drawn from what the page context read on arrival, so it costs no query of its own.
 */
export function teamMenuOf(req: Request, known: PersonSnapshot): TeamMenu {
  const current = known.memberships.find((m) => m.team.id === known.currentTeamId)?.team;
  return {
    current: current ? { id: current.id, name: current.name } : undefined,
    twoFactorRequired: current?.requireTwoFactor && !known.twoFactor ? current.name : null,
    others: known.memberships
      .filter((m) => m.team.id !== known.currentTeamId)
      .map((m) => ({ id: m.team.id, name: m.team.name })),
    returnTo: req.method === 'GET' && isReturnPage(req.originalUrl) ? req.originalUrl : '/teams',
  };
}
