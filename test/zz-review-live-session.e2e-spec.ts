import { describe, expect, it } from '@jest/globals';
import { Session } from '../src/auth/session.entity.js';
import { TeamsRepository } from '../src/teams/teams.repository.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { User } from '../src/users/user.entity.js';
import { TwoFactorCredential } from '../src/two-factor/two-factor-credential.entity.js';
import { TokensRepository } from '../src/tokens/tokens.repository.js';
import { TokenPin } from '../src/tokens/token-pin.entity.js';
import { addMember, createTeam, createToken, createUser } from './factories/index.js';
import { createTestApp } from './support/test-app.js';

async function oldFindSignedIn(ds: any, userId: number) {
  const { entities, raw } = await ds.manager
    .getRepository(User)
    .createQueryBuilder('u')
    .leftJoinAndMapMany('u.memberships', TeamMember, 'm', 'm.user_id = u.id')
    .leftJoinAndMapOne('m.team', Team, 't', 't.id = m.team_id')
    .addSelect(
      `CASE WHEN EXISTS (SELECT 1 FROM two_factor_credentials c WHERE c.user_id = u.id) THEN 1 ELSE 0 END`,
      'two_factor',
    )
    .where('u.id = :userId', { userId })
    .orderBy('t.name', 'ASC')
    .addOrderBy('t.id', 'ASC')
    .getRawAndEntities();
  const found = entities[0];
  if (!found) return null;
  const { memberships = [], ...user } = found;
  return {
    user: Object.assign(new User(), user),
    known: {
      email: user.email,
      emailVerifiedAt: user.emailVerifiedAt,
      currentTeamId: user.currentTeamId,
      memberships: memberships.map((m: any) => ({ team: m.team!, role: m.role })),
      twoFactor: Number(raw[0]?.two_factor) === 1,
    },
  };
}

describe('review: findLiveSession', () => {
  it('matches the old read', async () => {
    const t = await createTestApp();
    try {
      const ds = t.dataSource;
      const repo = t.app.get(TeamsRepository);
      const a = await createUser(t.app, { name: 'A', email: 'a-rev@example.com' });
      const b = await createUser(t.app, { name: 'B', email: 'b-rev@example.com' });
      const lonely = await createUser(t.app, { name: 'L', email: 'l-rev@example.com' });
      await ds.getRepository(TeamMember).delete({ userId: lonely.id });
      const t1 = await createTeam(t.app, b, 'zeta');
      const t2 = await createTeam(t.app, b, 'Alpha');
      const t3 = await createTeam(t.app, b, 'alpha');
      const t4 = await createTeam(t.app, b, 'Alpha');
      for (const tm of [t1, t2, t3, t4]) await addMember(t.app, tm.id, a, 'admin');
      await ds.getRepository(Team).update(t2.id, { requireTwoFactor: true, allowedAbilities: ['user:read'] });
      await ds.getRepository(User).update(a.id, { disabledAt: new Date(), currentTeamId: t3.id });
      await ds.getRepository(TwoFactorCredential).insert({ userId: a.id, secret: 'x' } as any);
      const now = new Date();
      const later = new Date(now.getTime() + 3600_000);
      const rows: Partial<Session>[] = [
        { id: 's-a', userId: a.id, data: JSON.stringify({ userId: a.id }), expiresAt: later },
        { id: 's-b', userId: b.id, data: JSON.stringify({ userId: b.id }), expiresAt: later },
        { id: 's-l', userId: lonely.id, data: JSON.stringify({ userId: lonely.id }), expiresAt: later },
        { id: 's-none', userId: null, data: JSON.stringify({ x: 1 }), expiresAt: later },
        { id: 's-old', userId: a.id, data: '{}', expiresAt: new Date(now.getTime() - 1) },
        { id: 's-edge', userId: a.id, data: '{}', expiresAt: now },
      ];
      for (const r of rows) await ds.getRepository(Session).insert(r as any);
      for (const [sid, uid] of [['s-a', a.id], ['s-b', b.id], ['s-l', lonely.id]] as const) {
        const found = await repo.findLiveSession(sid, now);
        const old = await oldFindSignedIn(ds, uid);
        expect(found!.person).toEqual(old);
        expect(found!.person!.user).toBeInstanceOf(User);
        // strict: no undefined-vs-missing differences
        expect(found!.person).toStrictEqual(old);
        console.log(sid, JSON.stringify(found!.person!.known.memberships.map((m) => [m.team.name, m.team.id, m.role])), found!.person!.known.twoFactor);
      }
      expect(await repo.findLiveSession('s-none', now)).toEqual({ data: '{"x":1}', person: null });
      expect(await repo.findLiveSession('s-old', now)).toBeNull();
      expect(await repo.findLiveSession('s-edge', now)).toBeNull();
      expect(await repo.findLiveSession('nope', now)).toBeNull();

      // tokens with pins, one pinned to a deleted team
      const tk1 = (await createToken(t.app, a)).token;
      const tk2 = (await createToken(t.app, a)).token;
      await ds.getRepository(TokenPin).insert({ tokenId: tk1.id, teamId: t4.id });
      await ds.getRepository(TokenPin).insert({ tokenId: tk2.id, teamId: null });
      const got = await t.app.get(TokensRepository).findAllForOwnerWithPins(a.id);
      console.log(JSON.stringify(got.pins), got.tokens.map((x) => x.id));
      const oldTokens = await ds.getRepository((await import('../src/tokens/personal-access-token.entity.js')).PersonalAccessToken).find({ where: { userId: a.id }, order: { createdAt: 'DESC', id: 'DESC' } });
      expect(got.tokens).toStrictEqual(oldTokens);
    } finally {
      await t.close();
    }
  });
});
