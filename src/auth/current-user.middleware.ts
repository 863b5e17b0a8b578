import { Actors } from '../common/actor.js';
import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { takeFlash } from '../common/web/flash.js';
import { UsersRepository } from '../users/users.repository.js';
import type { User } from '../users/user.entity.js';
import type { Team } from '../teams/team.entity.js';
import { TeamsService } from '../teams/teams.service.js';
import { isReturnPage } from '../common/web/return-to.js';
import { credentialStamp } from './credential-stamp.js';
import { noteActivity } from './session-activity.js';
import { Clock } from '../clock/clock.js';

/** What the header's team menu shows: the current team, the others to switch to, and the way back. */
function teamSwitcher(user: User, memberships: { team: Team }[], req: Request): object {
  const current = memberships.find((m) => m.team.id === user.currentTeamId)?.team;
  return {
    current: current ? { id: current.id, name: current.name } : undefined,
    others: memberships
      .filter((m) => m.team.id !== user.currentTeamId)
      .map((m) => ({ id: m.team.id, name: m.team.name })),
    returnTo: isReturnPage(req.originalUrl) ? req.originalUrl : '/teams',
  };
}

/**
 * Resolves the signed-in user of the session for guards, controllers and views, and ends a
 * session that is older than the absolute timeout however active it has been, or that was
 * signed in under a password changed since.
 */
@Injectable()
export class CurrentUserMiddleware implements NestMiddleware {
  private readonly absoluteMs: number;

  constructor(
    @Inject(CONFIG) config: Config,
    private readonly users: UsersRepository,
    private readonly teams: TeamsService,
    private readonly clock: Clock,
  ) {
    this.absoluteMs = config.web.sessionAbsoluteHours * 3_600_000;
  }

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      const { userId, signedInAt = 0, credentialStamp: stamp } = req.session ?? {};
      const now = this.clock.nowMs();
      const live = userId !== undefined && now - signedInAt <= this.absoluteMs;
      // A page shown (GET) has the team switcher in its header: its teams are read alongside.
      const [user, memberships] = live
        ? await Promise.all([
            this.users.findById(userId),
            req.method === 'GET' ? this.teams.membershipsOf(Actors.person(userId)) : undefined,
          ])
        : [null, undefined];
      if (user && stamp === credentialStamp(user.passwordHash)) {
        req.currentUser = user;
        noteActivity(req, now);
        res.locals.currentUser = { id: user.id, name: user.name, email: user.email };
        if (memberships) res.locals.teamSwitcher = teamSwitcher(user, memberships, req);
      } else if (userId !== undefined) {
        // Too old, or signed in under a password since changed: a fresh, empty session. The old
        // one is gone from the store; forms still get a token.
        await new Promise<void>((resolve, reject) =>
          req.session.regenerate((e) => (e ? reject(e) : resolve())),
        );
      }
      // A function, so the token is made only when a page renders a form ({{csrfToken}} calls
      // it): redirects and error pages set no cookie.
      res.locals.csrfToken = () => req.csrfToken?.();
      // Pages are per person: never kept, so Back cannot show a just-created token again.
      res.setHeader('Cache-Control', 'no-store');
      // A redirect's messages are shown by the page it lands on.
      if (req.method === 'GET') res.locals.flash = takeFlash(req.session);
      next();
    } catch (error) {
      next(error);
    }
  }
}
