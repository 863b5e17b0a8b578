import { beforeEach, describe, expect, it } from '@jest/globals';
import { Actors, type Actor } from '../common/actor.js';
import type { Team } from './team.entity.js';
import type { User } from '../users/user.entity.js';
import {
  NotTeamManagerError,
  NotTeamMemberError,
  OwnerOnlyError,
  PersonalTeamError,
  ServiceAccountNotAllowedError,
  TeamNotFoundError,
} from './teams.errors.js';
import {
  ADA,
  ADAM,
  APOLLO,
  MAX,
  MEL,
  OLIVIA,
  personalOf,
  STRANGER,
  TeamServices,
} from '../../test/support/team-services.js';

describe('TeamsService', () => {
  const h = new TeamServices();
  beforeEach(() => h.reset());

  it('should make the creator the owner of a new team, switch them to it and log it as theirs', async () => {
    const actor: Actor = {
      kind: 'token',
      userId: STRANGER,
      tokenId: 9,
      client: { ip: '203.0.113.7', userAgent: 'curl' },
    };
    const team = await h.service.createTeam(actor, { name: 'Borealis' });
    expect(team).toMatchObject({ name: 'Borealis', ownerId: STRANGER, personal: false });
    expect(h.roleIn(team.id, STRANGER)).toBe('owner');
    expect(h.currentTeamOf(STRANGER)).toBe(team.id);
    expect(h.recordIn).toHaveBeenCalledTimes(1);
    expect(h.recordIn).toHaveBeenCalledWith(
      h.manager,
      actor,
      expect.objectContaining({ event: 'team.created', teamId: team.id }),
    );
  });

  it('should refuse to show a team by its slug to someone outside it, as if it did not exist, but not to the operator', async () => {
    await expect(h.service.getBySlug(Actors.person(STRANGER), 'apollo')).rejects.toBeInstanceOf(
      NotTeamMemberError,
    );
    await expect(h.service.getBySlug(Actors.person(MEL), 'apollo')).resolves.toMatchObject({
      id: APOLLO,
    });
    await expect(h.service.getBySlug(Actors.operator(), 'apollo')).resolves.toMatchObject({
      id: APOLLO,
    });
    await expect(h.service.getBySlug(Actors.operator(), 'nowhere')).rejects.toBeInstanceOf(
      TeamNotFoundError,
    );
  });

  it('should refuse to switch someone to a team they are not in, and leave their current team as it was', async () => {
    await expect(h.service.switchTeam(Actors.person(STRANGER), APOLLO)).rejects.toBeInstanceOf(
      NotTeamMemberError,
    );
    expect(h.currentTeamOf(STRANGER)).toBe(personalOf(STRANGER));
    await expect(h.service.switchTeam(Actors.person(MEL), personalOf(MEL))).resolves.toMatchObject({
      id: personalOf(MEL),
    });
    expect(h.currentTeamOf(MEL)).toBe(personalOf(MEL));
  });

  it('should tell a service account of the team it is not a member (403) where anyone else outside finds no team (404)', async () => {
    const bot = 90;
    h.store.users.set(bot, { id: bot, name: 'bot', serviceAccountTeamId: APOLLO } as User);
    const token = (userId: number): Actor => ({
      kind: 'token',
      userId,
      tokenId: 1,
      client: { ip: null, userAgent: null },
    });
    await expect(h.service.getManageableTeam(token(bot), APOLLO)).rejects.toBeInstanceOf(
      ServiceAccountNotAllowedError,
    );
    await expect(h.service.getForManager(token(bot), APOLLO)).rejects.toBeInstanceOf(
      ServiceAccountNotAllowedError,
    );
    // In another team it is a stranger like any other.
    await expect(
      h.service.getManageableTeam(token(bot), personalOf(OLIVIA)),
    ).rejects.toBeInstanceOf(NotTeamMemberError);
    await expect(h.service.getManageableTeam(token(STRANGER), APOLLO)).rejects.toBeInstanceOf(
      NotTeamMemberError,
    );
  });

  it('should offer the owner every other member, an admin only the members, and a member no one to manage', async () => {
    const manageable = async (viewer: number) =>
      (await h.service.getForMember(Actors.person(viewer), APOLLO)).members
        .filter((m) => m.removable && m.roleEditable)
        .map((m) => m.user.id)
        .sort();
    expect(await manageable(OLIVIA)).toEqual([ADAM, ADA, MEL, MAX]);
    expect(await manageable(ADAM)).toEqual([MEL, MAX]);
    expect(await manageable(MEL)).toEqual([]);
    const details = await h.service.getForMember(Actors.person(ADAM), APOLLO);
    expect(details.role).toBe('admin');
    // What may be removed is what may be re-roled: one rule for both.
    expect(details.members.every((m) => m.removable === m.roleEditable)).toBe(true);
    await expect(h.service.getForMember(Actors.person(STRANGER), APOLLO)).rejects.toBeInstanceOf(
      NotTeamMemberError,
    );
  });

  it('should let an admin rename the team and log the old and new names against the actor given, once', async () => {
    const actor = Actors.person(ADAM, { ip: '198.51.100.4', userAgent: 'Firefox' }, 'sess-1');
    const renamed = await h.service.rename(actor, APOLLO, { name: 'Artemis' });
    expect(renamed.name).toBe('Artemis');
    expect(h.store.teams.get(APOLLO)!.name).toBe('Artemis');
    expect(h.recordIn).toHaveBeenCalledWith(h.manager, actor, {
      event: 'team.renamed',
      teamId: APOLLO,
      target: { type: 'team', id: APOLLO },
      detail: { name: 'Artemis', previous_name: 'Apollo' },
    });
    // The same name again is no rename worth an event.
    await h.service.rename(Actors.person(OLIVIA), APOLLO, { name: 'Artemis' });
    expect(h.recordIn).toHaveBeenCalledTimes(1);
  });

  it('should refuse a rename by a member and by someone outside the team, writing nothing', async () => {
    await expect(
      h.service.rename(Actors.person(MEL), APOLLO, { name: 'Mine now' }),
    ).rejects.toBeInstanceOf(NotTeamManagerError);
    await expect(
      h.service.rename(Actors.person(STRANGER), APOLLO, { name: 'Mine now' }),
    ).rejects.toBeInstanceOf(NotTeamMemberError);
    expect(h.store.teams.get(APOLLO)!.name).toBe('Apollo');
    h.expectNothingWritten();
  });

  it('should let only the owner delete a team, never a personal one, and move everyone who worked in it', async () => {
    await expect(h.service.deleteTeam(Actors.person(ADAM), APOLLO)).rejects.toBeInstanceOf(
      OwnerOnlyError,
    );
    await expect(h.service.deleteTeam(Actors.person(MEL), personalOf(MEL))).rejects.toBeInstanceOf(
      PersonalTeamError,
    );
    h.expectNothingWritten();

    const actor = Actors.person(OLIVIA);
    await expect(h.service.deleteTeam(actor, APOLLO)).resolves.toMatchObject({ id: APOLLO });
    expect(h.store.teams.has(APOLLO)).toBe(false);
    for (const id of [OLIVIA, ADAM, ADA, MEL, MAX])
      expect(h.currentTeamOf(id)).toBe(personalOf(id));
    expect(h.recordIn).toHaveBeenCalledWith(
      h.manager,
      actor,
      expect.objectContaining({
        event: 'team.deleted',
        teamId: APOLLO,
        detail: { name: 'Apollo' },
      }),
    );
  });

  it('should refuse a deletion when the team changed hands before its row was locked', async () => {
    h.teams.lockForUpdate.mockImplementationOnce(
      async () => ({ ...h.store.teams.get(APOLLO)!, ownerId: MEL }) as Team,
    );
    await expect(h.service.deleteTeam(Actors.person(OLIVIA), APOLLO)).rejects.toBeInstanceOf(
      OwnerOnlyError,
    );
    expect(h.store.teams.has(APOLLO)).toBe(true);
    h.expectNothingWritten();
  });
});
