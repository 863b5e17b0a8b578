import { credentialStamp } from '../auth/session-digests.js';
import { pageSession, noteActivity } from './session/page-session.js';
import { noteSessionEnded, signedInPersonOf } from './session/web-session.js';
import {
  createParamDecorator,
  Inject,
  Injectable,
  type ExecutionContext,
  type NestMiddleware,
} from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { signedInActor } from '../http/access.js';
import type { PersonSnapshot } from '../common/actor.js';
import { KEPT_SIGNED_IN_MS } from './session/kept-signed-in.js';
import { isReturnPage } from './return-to.js';
import { Clock } from '../clock/clock.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { isServiceAccount, type User } from '../users/user.entity.js';

/**
 * Who a page request acts for, built once on arrival after the session and CSRF: the signed-in
 * person's row, their teams, current team and two-factor state, read with the session in one
 * query (the session store's `get`), kept on the
 * actor (`PersonActor.known`) that controllers hand to services, and the header's team menu
 * drawn from the same. A session older than the absolute timeout however active it has been, or
 * signed in under a password changed since, or of an account disabled since, is ended.
 */
/** Where the links that confirm an address open. */
const CONFIRMATION_LINKS = '/verify-email/';

@Injectable()
export class PageContext implements NestMiddleware {
  private readonly absoluteMs: number;
  /** Whether addresses are confirmed before API tokens (EMAIL_VERIFICATION=required). */
  private readonly confirming: boolean;

  constructor(
    @Inject(CONFIG) config: Config,
    private readonly clock: Clock,
  ) {
    this.absoluteMs = config.web.sessionAbsoluteHours * 3_600_000;
    this.confirming = config.mail.verification === 'required';
  }

  use(req: Request, res: Response, next: NextFunction): void {
    this.build(req, res).then(() => next(), next);
  }

  private async build(req: Request, res: Response): Promise<void> {
    const { userId, signedInAt = 0, credentialStamp: stamp } = pageSession(req) ?? {};
    if (userId === undefined) return;
    const now = this.clock.nowMs();
    const absoluteMs = pageSession(req).keptSignedIn ? KEPT_SIGNED_IN_MS : this.absoluteMs;
    const found = now - signedInAt <= absoluteMs ? signedInPersonOf(req) : null;
    // The person of the session's row (its `user_id`), which every write keeps equal to the
    // data's `userId`; were they ever to differ, the session ends.
    const user = found && Number(found.user.id) === userId ? found.user : undefined;
    // A disabled account's session, and any found for a service account (which never holds
    // one), is ended like a stale one.
    if (
      !found ||
      !user ||
      user.disabledAt ||
      isServiceAccount(user) ||
      stamp !== credentialStamp(user.passwordHash)
    ) {
      // A fresh, empty session: the old one is gone from the store; forms still get a token.
      noteSessionEnded(req);
      await new Promise<void>((resolve, reject) =>
        pageSession(req).regenerate((e) => (e ? reject(e) : resolve())),
      );
      return;
    }
    setSignedInUser(req, user);
    signedInActor(req, user.id).known = found.known;
    noteActivity(req, now);
    res.locals.currentUser = {
      id: user.id,
      name: user.name,
      email: user.email,
      // The header's "Confirm your email address" (with Resend): only where addresses are
      // confirmed, and not on the page of a confirmation link, which Resend would replace.
      addressUnconfirmed:
        this.confirming &&
        user.emailVerifiedAt === null &&
        !req.path.startsWith(CONFIRMATION_LINKS),
      // The page a form in the header (Resend) comes back to.
      page: req.method === 'GET' && isReturnPage(req.originalUrl) ? req.originalUrl : undefined,
    };
    // Drawn when the page is, so a form that changed what it shows (two-factor turned on) is
    // shown as it is now.
    Object.defineProperty(res.locals, 'teamSwitcher', {
      enumerable: true,
      configurable: true,
      get: () => teamMenuOf(req, found.known),
    });
  }
}

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

/**
 * The person signed in through the page's session, as the page context found them (a snapshot
 * of their row taken once per request), kept beside the request rather than declared onto it.
 */
const signedIn = new WeakMap<IncomingMessage, User>();

export function signedInUserOf(req: IncomingMessage): User | undefined {
  return signedIn.get(req);
}

function setSignedInUser(req: IncomingMessage, user: User): void {
  signedIn.set(req, user);
}

/** The person signed in through the browser session (the route must be @SignedIn()). */
export const SignedInUser = createParamDecorator((_: unknown, ctx: ExecutionContext): User => {
  const user = signedInUserOf(ctx.switchToHttp().getRequest<IncomingMessage>());
  if (!user) {
    throw new Error('No signed-in user on the request: is the route behind @SignedIn()?');
  }
  return user;
});
