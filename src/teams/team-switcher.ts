import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { actorOf } from '../auth/current-actor.js';
import { isReturnPage } from '../common/web/return-to.js';
import { TeamsService } from './teams.service.js';

/**
 * The team menu in a signed-in page's header: the current team, the others to switch to, and the
 * way back. The pages' chain runs it after the signed-in person is known (app.setup.ts), for
 * pages shown (GET) only: a form's answer is a redirect.
 */
@Injectable()
export class TeamSwitcher {
  constructor(private readonly teams: TeamsService) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const user = req.currentUser;
    if (!user || req.method !== 'GET') return next();
    this.teams.membershipsOf(actorOf(req)).then((memberships) => {
      const current = memberships.find((m) => m.team.id === user.currentTeamId)?.team;
      res.locals.teamSwitcher = {
        current: current ? { id: current.id, name: current.name } : undefined,
        others: memberships
          .filter((m) => m.team.id !== user.currentTeamId)
          .map((m) => ({ id: m.team.id, name: m.team.name })),
        returnTo: isReturnPage(req.originalUrl) ? req.originalUrl : '/teams',
      };
      next();
    }, next);
  }
}
