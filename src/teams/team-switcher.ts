import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { actorOf } from '../auth/access.js';
import { isReturnPage } from '../common/web/return-to.js';
import { TeamsService } from './teams.service.js';

/**
 * The team menu in a signed-in page's header: the current team, the others to switch to, and the
 * way back; and the reminder that the current team requires two-factor sign-in, when it does
 * and the person has not turned it on. The pages' chain runs it once the signed-in person is known (app.setup.ts), whatever
 * the method and even after an error (a refused form's error page has the same header); the
 * teams are read only when a page is rendered, not for a redirect.
 */
@Injectable()
export class TeamSwitcher {
  constructor(private readonly teams: TeamsService) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const user = req.currentUser;
    if (user) {
      const render = res.render.bind(res) as (...args: unknown[]) => void;
      res.render = ((...args: unknown[]) => {
        this.menuFor(req, user.currentTeamId).then(
          (menu) => {
            res.locals.teamSwitcher = menu;
            render(...args);
          },
          // The page matters more than its menu: shown without it.
          () => render(...args),
        );
      }) as Response['render'];
    }
    next();
  }

  private async menuFor(req: Request, currentTeamId: number | null): Promise<object> {
    const actor = actorOf(req);
    const memberships = await this.teams.membershipsOf(actor);
    const current = memberships.find((m) => m.team.id === currentTeamId)?.team;
    // The current team requires two-factor sign-in, which this person has not turned on.
    const twoFactorRequired =
      current?.requireTwoFactor && !(await this.teams.hasTwoFactor(actor)) ? current.name : null;
    return {
      current: current ? { id: current.id, name: current.name } : undefined,
      twoFactorRequired,
      others: memberships
        .filter((m) => m.team.id !== currentTeamId)
        .map((m) => ({ id: m.team.id, name: m.team.name })),
      returnTo: req.method === 'GET' && isReturnPage(req.originalUrl) ? req.originalUrl : '/teams',
    };
  }
}
