import type { INestApplication } from '@nestjs/common';
import { Actors } from '../../src/common/actor.js';
import { randomBytes } from 'node:crypto';
import { Clock, ManualClock } from '../../src/clock/clock.js';
import { RegistrationService } from '../../src/sign-in/registration.service.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { TeamMembersService } from '../../src/teams/team-members.service.js';
import { TeamsService } from '../../src/teams/teams.service.js';
import type { Team } from '../../src/teams/team.entity.js';
import type { CreateTokenDto } from '../../src/tokens/dto/create-token.dto.js';
import { TokensService, type CreatedToken } from '../../src/tokens/tokens.service.js';
import type { User } from '../../src/users/user.entity.js';

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}@example.com`;
}

/** An account made directly (as the command line makes them): its address confirmed unless told. */
export function createUser(
  app: INestApplication,
  overrides: Partial<{ name: string; email: string; password: string; verified: boolean }> = {},
): Promise<User> {
  return app.get(RegistrationService).createAccount(
    {
      name: overrides.name ?? 'Ada Lovelace',
      email: overrides.email ?? uniqueEmail(),
      password: overrides.password,
    },
    { verified: overrides.verified ?? true },
  );
}

/**
 * A token, once the background work its creation started is done (its "new API token" notice
 * sent, its security log event written): none of it then mixes with the statements of a spec
 * that counts queries.
 */
export async function createToken(
  app: INestApplication,
  user: Pick<User, 'id'>,
  overrides: Partial<CreateTokenDto> = {},
): Promise<CreatedToken> {
  const created = await app
    .get(TokensService)
    .create(Actors.operator(user.id), { name: 'test token', ...overrides });
  await app.get(Scheduler).drain();
  return created;
}

/** A token revoked just now. */
export async function createRevokedToken(
  app: INestApplication,
  user: Pick<User, 'id'>,
): Promise<CreatedToken> {
  const created = await createToken(app, user);
  await app.get(TokensService).revoke(Actors.operator(user.id), created.token.id);
  return created;
}

const DAY_MS = 86_400_000;

/**
 * A token whose expiry passed a second ago: made for one day, a day and a second ago, on the
 * app's clock (a ManualClock, set back for the making and forward again).
 */
export async function createExpiredToken(
  app: INestApplication,
  user: Pick<User, 'id'>,
  overrides: Partial<CreateTokenDto> = {},
): Promise<CreatedToken> {
  const clock = app.get(Clock);
  if (!(clock instanceof ManualClock)) {
    throw new Error('createExpiredToken moves the clock: create the app with a ManualClock');
  }
  clock.advance(-(DAY_MS + 1000));
  try {
    return await createToken(app, user, { ...overrides, expiresInDays: 1 });
  } finally {
    clock.advance(DAY_MS + 1000);
  }
}

export function createTeam(
  app: INestApplication,
  owner: Pick<User, 'id'>,
  name = 'Acme Corp',
): Promise<Team> {
  return app.get(TeamsService).createTeam(Actors.operator(owner.id), { name });
}

/** Puts a user in a team directly, as the operator's `team:add-member` does. */
export async function addMember(
  app: INestApplication,
  teamId: number,
  user: Pick<User, 'email'>,
  role: 'member' | 'admin' = 'member',
): Promise<void> {
  await app
    .get(TeamMembersService)
    .addMember(Actors.operator(), teamId, { email: user.email, role });
}
