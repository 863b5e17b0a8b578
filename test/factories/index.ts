import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { RegistrationService } from '../../src/auth/registration.service.js';
import { TeamsService } from '../../src/teams/teams.service.js';
import type { Team } from '../../src/teams/team.entity.js';
import type { CreateTokenDto } from '../../src/tokens/dto/create-token.dto.js';
import { TokensService, type CreatedToken } from '../../src/tokens/tokens.service.js';
import type { User } from '../../src/users/user.entity.js';

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}@example.com`;
}

export function createUser(
  app: INestApplication,
  overrides: Partial<{ name: string; email: string; password: string }> = {},
): Promise<User> {
  return app.get(RegistrationService).register({
    name: overrides.name ?? 'Ada Lovelace',
    email: overrides.email ?? uniqueEmail(),
    password: overrides.password,
  });
}

export function createToken(
  app: INestApplication,
  user: Pick<User, 'id'>,
  overrides: Partial<CreateTokenDto> = {},
): Promise<CreatedToken> {
  return app.get(TokensService).create(user.id, { name: 'test token', ...overrides });
}

export function createTeam(
  app: INestApplication,
  owner: Pick<User, 'id'>,
  name = 'Acme Corp',
): Promise<Team> {
  return app.get(TeamsService).createTeam(owner.id, { name });
}
