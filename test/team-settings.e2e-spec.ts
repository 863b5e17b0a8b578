import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ManualClock } from '../src/clock/clock.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { TeamsService } from '../src/teams/teams.service.js';
import { User } from '../src/users/user.entity.js';
import { addMember, createToken } from './factories/index.js';
import { visibleText } from './support/html.js';
import { PASSWORD, signedInPerson, type SignedInPerson } from './support/people.js';
import { forgetPasswordConfirmation } from './support/sessions.js';
import { apiTeam, rolesIn, staffedTeam, teamOf as teamWith } from './support/teams.js';
import { createTestApp, type TestApp } from './support/test-app.js';

interface Member extends SignedInPerson {
  /** An API token of the person's, to see their current team as the API does. */
  token: string;
}

describe('team settings: name, roles, ownership, leaving, deletion, switcher', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' }, { clock });
  });
  afterAll(async () => {
    await t.close();
  });

  async function member(name: string): Promise<Member> {
    const person = await signedInPerson(t, { name });
    return { ...person, token: (await createToken(t.app, person.user)).plaintext };
  }

  /** A team owned by `owner` with the others in it under the given roles. */
  const teamOf = (owner: Member, others: [Member, 'admin' | 'member'][], name = 'Acme') =>
    teamWith(t, owner, others, name);

  describe('rename', () => {
    it('should let the owner and admins rename the team, the slug following the name', async () => {
      const owner = await member('Olive Owner');
      const admin = await member('Adam Admin');
      const team = await teamOf(owner, [[admin, 'admin']], 'Rename Me');

      const res = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}`, {
        name: 'Blue Whales',
      });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(`/teams/${team.id}`);
      expect(await owner.client.textOf(`/teams/${team.id}`)).toContain(
        'The team is now called "Blue Whales".',
      );
      expect(await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).toMatchObject(
        { name: 'Blue Whales', slug: 'blue-whales' },
      );
      expect(await apiTeam(t, owner.token)).toEqual({
        id: team.id,
        name: 'Blue Whales',
        slug: 'blue-whales',
      });

      // Another team takes the name: its slug stays unique.
      const other = await teamOf(admin, [], 'Other Team');
      await admin.client.submit(`/teams/${other.id}`, `/teams/${other.id}`, {
        name: 'Blue Whales',
      });
      expect((await t.dataSource.getRepository(Team).findOneByOrFail({ id: other.id })).slug).toBe(
        'blue-whales-2',
      );

      // The admin of the first team renames it too; the same name keeps the slug.
      await admin.client.submit(`/teams/${team.id}`, `/teams/${team.id}`, { name: 'Blue  Whales' });
      expect((await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).slug).toBe(
        'blue-whales',
      );
    });

    it('should refuse members, outsiders and bad names, changing nothing', async () => {
      const owner = await member('Owner R');
      const plain = await member('Plain Member');
      const outsider = await member('Outsider R');
      const team = await teamOf(owner, [[plain, 'member']], 'Keep Name');

      const byMember = await plain.client.submit(`/teams/${team.id}`, `/teams/${team.id}`, {
        name: 'Taken Over',
      });
      expect(byMember.status).toBe(403);
      expect(visibleText(byMember.text)).toContain('Only the team owner or an admin can do that.');
      const byOutsider = await outsider.client.submit('/teams', `/teams/${team.id}`, {
        name: 'Taken Over',
      });
      expect(byOutsider.status).toBe(404);

      const empty = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}`, {
        name: '   ',
      });
      expect(empty.headers.location).toBe(`/teams/${team.id}`);
      expect(await owner.client.textOf(`/teams/${team.id}`)).toContain('Give the team a name.');
      // Letters that draw nothing are no name either, nor marks without a letter.
      for (const blank of ['\u3164', '\u2800\u2800', '\u0301\u0308', 'Keep\u034fName']) {
        const res = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}`, {
          name: blank,
        });
        expect(res.headers.location).toBe(`/teams/${team.id}`);
        expect(await owner.client.textOf(`/teams/${team.id}`)).toContain(
          'Team name must be visible text',
        );
      }
      expect((await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).name).toBe(
        'Keep Name',
      );
    });
  });

  describe('roles', () => {
    it("should let owners change anyone's role but their own, and admins members' only", async () => {
      const owner = await member('Owner Roles');
      const admin = await member('Admin Roles');
      const plain = await member('Member Roles');
      const team = await teamOf(owner, [
        [admin, 'admin'],
        [plain, 'member'],
      ]);
      const role = (by: Member, target: Member, value: string) =>
        by.client.submit(`/teams/${team.id}`, `/teams/${team.id}/members/${target.user.id}/role`, {
          role: value,
        });

      expect((await role(owner, plain, 'admin')).headers.location).toBe(`/teams/${team.id}`);
      expect(await owner.client.textOf(`/teams/${team.id}`)).toContain(
        'Member Roles is now an admin.',
      );
      // Only the owner changes an admin's role: an admin could otherwise demote one, then remove.
      expect((await role(admin, plain, 'member')).status).toBe(403);
      expect((await role(owner, plain, 'member')).status).toBe(303);
      expect((await role(admin, plain, 'admin')).status).toBe(303);
      expect((await role(owner, plain, 'member')).status).toBe(303);
      expect(await rolesIn(t, team.id)).toEqual({
        [owner.user.id]: 'owner',
        [admin.user.id]: 'admin',
        [plain.user.id]: 'member',
      });

      const onOwner = await role(admin, owner, 'member');
      expect(onOwner.headers.location).toBe(`/teams/${team.id}`);
      expect(await admin.client.textOf(`/teams/${team.id}`)).toContain(
        "The owner's role changes only when the owner transfers the team to someone else.",
      );
      expect((await role(plain, admin, 'member')).status).toBe(403);
      const madeOwner = await role(owner, plain, 'owner');
      expect(madeOwner.status).toBe(303);
      const refused = (await owner.client.get(`/teams/${team.id}`)).text;
      expect(visibleText(refused)).toContain('Role must be one of member, admin.');
      // Under the member's own select, tied to it, not under the invitation form's.
      expect(refused).toContain(
        `<p class="field-error" id="role-${plain.user.id}-error">Role must be one of member, admin.</p>`,
      );
      expect(refused).toMatch(
        new RegExp(
          `id="role-${plain.user.id}"[^>]*role-${plain.user.id}-error" aria-invalid="true"`,
        ),
      );
      expect(refused).not.toContain('id="role-error"');
      expect(await rolesIn(t, team.id)).toEqual({
        [owner.user.id]: 'owner',
        [admin.user.id]: 'admin',
        [plain.user.id]: 'member',
      });
    });

    it('should answer 404 for a member of another team and change nothing there', async () => {
      const owner = await member('Owner Iso');
      const stranger = await member('Stranger Iso');
      const mine = await teamOf(owner, []);
      const theirs = await teamOf(stranger, [], 'Theirs');
      const res = await owner.client.submit(
        `/teams/${mine.id}`,
        `/teams/${mine.id}/members/${stranger.user.id}/role`,
        { role: 'member' },
      );
      expect(res.status).toBe(404);
      const across = await owner.client.submit(
        `/teams/${mine.id}`,
        `/teams/${theirs.id}/members/${stranger.user.id}/role`,
        { role: 'member' },
      );
      expect(across.status).toBe(404);
      expect(await rolesIn(t, theirs.id)).toEqual({ [stranger.user.id]: 'owner' });
    });

    it('should refuse to remove an admin when another admin asks, and remove a member when an admin does', async () => {
      const { team, owner, adminA, adminB, member: plain } = await staffedTeam(t);
      const memberIds = async () =>
        (await t.dataSource.getRepository(TeamMember).findBy({ teamId: team.id }))
          .map((m) => m.userId)
          .sort((a, b) => a - b);
      const everyone = await memberIds();
      expect(everyone).toHaveLength(4);

      const page = await adminA.client.get(`/teams/${team.id}`);
      expect(page.text).not.toContain(`/members/${adminB.user.id}/remove`);
      expect(page.text).toContain(`/members/${plain.user.id}/remove`);

      const refused = await adminA.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/remove`,
      );
      expect(refused.status).toBe(403);
      expect(visibleText(refused.text)).toContain('Only the team owner can remove an admin.');
      expect(await memberIds()).toEqual(everyone);

      const removed = await adminA.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${plain.user.id}/remove`,
      );
      expect(removed.status).toBe(303);
      const byOwner = await owner.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/remove`,
      );
      expect(byOwner.status).toBe(303);
      expect(await memberIds()).toEqual([owner.user.id, adminA.user.id].sort((a, b) => a - b));
    });

    it("should let only the owner change an admin's role when an admin would demote another to remove them", async () => {
      const { team, owner, adminA, adminB, member: plain } = await staffedTeam(t);
      const page = (await adminA.client.get(`/teams/${team.id}`)).text;
      expect(page).not.toContain(`/members/${adminB.user.id}/role`);
      expect(page).toContain(`/members/${plain.user.id}/role`);

      const demoted = await adminA.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/role`,
        { role: 'member' },
      );
      expect(demoted.status).toBe(403);
      expect(visibleText(demoted.text)).toContain(
        "Only the team owner can change an admin's role.",
      );
      const removed = await adminA.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/remove`,
      );
      expect(removed.status).toBe(403);
      expect((await rolesIn(t, team.id))[adminB.user.id]).toBe('admin');

      // An admin still makes a member an admin; the owner changes an admin's role.
      const promoted = await adminA.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${plain.user.id}/role`,
        { role: 'admin' },
      );
      expect(promoted.status).toBe(303);
      const byOwner = await owner.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/role`,
        { role: 'member' },
      );
      expect(byOwner.status).toBe(303);
      expect(await rolesIn(t, team.id)).toMatchObject({
        [adminB.user.id]: 'member',
        [plain.user.id]: 'admin',
      });
    });

    it('should let no admin demote or remove another when the owner promotes them at the same moment', async () => {
      const { team, owner, adminA, member: plain } = await staffedTeam(t);
      const [adminCsrf, ownerCsrf] = await Promise.all([
        adminA.client.csrfFrom(`/teams/${team.id}`),
        owner.client.csrfFrom(`/teams/${team.id}`),
      ]);
      // The member is made an admin while another admin tries to remove them, 20 times at once.
      const answers = await Promise.all([
        owner.client.post(`/teams/${team.id}/members/${plain.user.id}/role`, ownerCsrf, {
          role: 'admin',
        }),
        ...Array.from({ length: 20 }, () =>
          adminA.client.post(`/teams/${team.id}/members/${plain.user.id}/remove`, adminCsrf),
        ),
      ]);
      expect(answers[0].status === 303 || answers[0].status === 404).toBe(true);
      const after = await rolesIn(t, team.id);
      // Either removed while still a member (and then the promotion found no one), or promoted
      // first and then kept: never an admin removed by an admin.
      if (after[plain.user.id] === undefined) expect(answers[0].status).toBe(404);
      else expect(after[plain.user.id]).toBe('admin');
      expect(answers.slice(1).filter((a) => a.status === 303).length).toBeLessThanOrEqual(1);
    });
  });

  describe('transfer, with sudo mode', () => {
    it('should offer a transfer only when there is another member to hand the team to', async () => {
      const owner = await member('Lonely Owner');
      const team = await teamOf(owner, [], 'Solo');
      expect(await owner.client.textOf(`/teams/${team.id}`)).not.toContain('Transfer ownership');
      const heir = await member('Later Heir');
      await addMember(t.app, team.id, heir.user);
      const page = await owner.client.textOf(`/teams/${team.id}`);
      expect(page).toContain('Transfer ownership');
      expect(page).toContain(`Later Heir (${heir.email})`);
    });

    it('should ask for the password when it is older than 15 minutes, then hand the team over', async () => {
      const owner = await member('Owner Transfer');
      const heir = await member('Heir Transfer');
      const team = await teamOf(owner, [[heir, 'member']], 'Dynasty');
      forgetPasswordConfirmation(clock);

      const asked = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/transfer`, {
        user_id: String(heir.user.id),
      });
      expect(asked.status).toBe(303);
      expect(asked.headers.location).toBe(
        `/confirm-password?return_to=${encodeURIComponent(`/teams/${team.id}`)}`,
      );
      expect(await rolesIn(t, team.id)).toEqual({
        [owner.user.id]: 'owner',
        [heir.user.id]: 'member',
      });

      const wrong = await owner.client.submit(asked.headers.location, '/confirm-password', {
        password: 'not my password',
        return_to: `/teams/${team.id}`,
      });
      // Back to the same page, which still names what waits.
      expect(wrong.headers.location).toBe(asked.headers.location);
      const again = await owner.client.get(wrong.headers.location);
      expect(visibleText(again.text)).toContain('That is not your password.');
      expect(visibleText(again.text)).toContain('Waiting for your password');
      expect(again.text).toContain(`name="return_to" value="/teams/${team.id}"`);

      const confirmed = await owner.client.submit('/confirm-password', '/confirm-password', {
        password: PASSWORD,
        return_to: `/teams/${team.id}`,
      });
      // The transfer goes on as it was asked, without choosing the heir again.
      expect(confirmed.headers.location).toBe('/confirm-password/continue');
      const done = await owner.client.resume();
      expect(done.headers.location).toBe(`/teams/${team.id}`);
      expect(await owner.client.textOf(`/teams/${team.id}`)).toContain(
        'Heir Transfer now owns the team; you are an admin.',
      );
      expect(await rolesIn(t, team.id)).toEqual({
        [owner.user.id]: 'admin',
        [heir.user.id]: 'owner',
      });
      expect(
        (await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).ownerId,
      ).toBe(heir.user.id);
      // The old owner, now an admin, can no longer delete it or hand it on.
      const retry = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/delete`);
      expect(retry.status).toBe(403);
    });

    it('should refuse admins, the owner themselves and people outside the team', async () => {
      const owner = await member('Owner T2');
      const admin = await member('Admin T2');
      const outsider = await member('Outsider T2');
      const team = await teamOf(owner, [[admin, 'admin']]);
      const transfer = (by: Member, to: Member) =>
        by.client.submit(`/teams/${team.id}`, `/teams/${team.id}/transfer`, {
          user_id: String(to.user.id),
        });
      expect((await transfer(admin, admin)).status).toBe(403);
      expect((await transfer(owner, owner)).status).toBe(404);
      expect((await transfer(owner, outsider)).status).toBe(404);
      expect(await rolesIn(t, team.id)).toEqual({
        [owner.user.id]: 'owner',
        [admin.user.id]: 'admin',
      });
    });

    it('should answer a transfer to a user id that is nobody at all with 404, changing nothing', async () => {
      const owner = await member('Owner T3');
      const team = await teamOf(owner, []);
      const nobody = owner.user.id + 1_000_000;
      const res = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/transfer`, {
        user_id: String(nobody),
      });
      expect(res.status).toBe(404);
      expect(visibleText(res.text)).toContain('No such member.');
      expect(await rolesIn(t, team.id)).toEqual({ [owner.user.id]: 'owner' });
      expect(
        (await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).ownerId,
      ).toBe(owner.user.id);
    });
  });

  describe('leave and delete', () => {
    it('should let a member leave, their current team going back to their own', async () => {
      const owner = await member('Owner Leave');
      const leaver = await member('Leaver');
      const team = await teamOf(owner, [[leaver, 'member']]);
      await leaver.client.submit('/teams', '/teams/switch', { team_id: String(team.id) });
      expect((await apiTeam(t, leaver.token)).id).toBe(team.id);

      const res = await leaver.client.submit(`/teams/${team.id}`, `/teams/${team.id}/leave`);
      expect(res.headers.location).toBe('/teams');
      expect((await apiTeam(t, leaver.token)).name).toBe("Leaver's Team");
      expect(await rolesIn(t, team.id)).toEqual({ [owner.user.id]: 'owner' });

      const ownerLeaves = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/leave`);
      expect(ownerLeaves.headers.location).toBe(`/teams/${team.id}`);
      expect(await owner.client.textOf(`/teams/${team.id}`)).toContain(
        'The owner of a team cannot be removed from it.',
      );
    });

    it('should keep the heir, as its owner, when the team is transferred to them as they leave it', async () => {
      const owner = await member('Owner Race');
      const heir = await member('Heir Race');
      const team = await teamOf(owner, [[heir, 'member']], 'Handed Over');
      // The transfer lands between the leave's own check (still a member) and its write.
      const teams = t.app.get(TeamsService);
      const check = teams.requireMembership.bind(teams);
      let transferred: number | undefined;
      jest.spyOn(teams, 'requireMembership').mockImplementation(async (...args) => {
        const checked = await check(...args);
        // The check removeMember makes (the page's own reads of the team come before it).
        if (transferred === undefined && new Error().stack?.includes('removeMember')) {
          const res = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/transfer`, {
            user_id: String(heir.user.id),
          });
          transferred = res.status;
        }
        return checked;
      });

      const left = await heir.client.submit(`/teams/${team.id}`, `/teams/${team.id}/leave`);
      jest.restoreAllMocks();
      expect(transferred).toBe(303);
      expect(left.headers.location).toBe(`/teams/${team.id}`);
      expect(await heir.client.textOf(`/teams/${team.id}`)).toContain(
        'The owner of a team cannot be removed from it.',
      );
      expect(await rolesIn(t, team.id)).toEqual({
        [owner.user.id]: 'admin',
        [heir.user.id]: 'owner',
      });
      expect(
        (await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).ownerId,
      ).toBe(heir.user.id);
    });

    it('should delete a team for its owner only, moving everyone who worked in it home', async () => {
      const owner = await member('Owner Delete');
      const admin = await member('Admin Delete');
      const team = await teamOf(owner, [[admin, 'admin']], 'Doomed');
      await admin.client.submit('/teams', '/teams/switch', { team_id: String(team.id) });
      expect((await apiTeam(t, owner.token)).id).toBe(team.id);

      expect(
        (await admin.client.submit(`/teams/${team.id}`, `/teams/${team.id}/delete`)).status,
      ).toBe(403);
      const personal = await owner.client.submit(
        '/teams',
        `/teams/${owner.user.currentTeamId}/delete`,
      );
      expect(personal.status).toBe(303);
      expect(await owner.client.textOf('/teams')).toContain('A personal team cannot be deleted.');

      const res = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/delete`);
      expect(res.headers.location).toBe('/teams');
      expect(await owner.client.textOf('/teams')).toContain('Team "Doomed" was deleted.');
      expect(await t.dataSource.getRepository(Team).findOneBy({ id: team.id })).toBeNull();
      expect(await t.dataSource.getRepository(TeamMember).findBy({ teamId: team.id })).toEqual([]);
      expect((await apiTeam(t, owner.token)).name).toBe("Owner's Team");
      expect((await apiTeam(t, admin.token)).name).toBe("Admin's Team");
      expect((await owner.client.get(`/teams/${team.id}`)).status).toBe(404);
    });
  });

  it("should keep every person's current team one they belong to under concurrent removal, deletion and switching", async () => {
    for (let round = 0; round < 3; round++) {
      const owner = await member(`Owner Race ${round}`);
      const crowd = await Promise.all([1, 2, 3, 4].map((i) => member(`Racer ${round}-${i}`)));
      const team = await teamOf(
        owner,
        crowd.map((p) => [p, 'member'] as [Member, 'member']),
        `Race ${round}`,
      );
      // Each person's form token first, so that the posts below leave at the same moment.
      const csrf = new Map<Member, string>();
      for (const p of [owner, ...crowd]) csrf.set(p, await p.client.csrfFrom('/teams'));
      const post = (p: Member, action: string, fields: Record<string, string> = {}) =>
        p.client.post(action, csrf.get(p)!, fields);
      const switchTo = (p: Member) => post(p, '/teams/switch', { team_id: String(team.id) });
      const answers = await Promise.all([
        ...crowd.map(switchTo),
        post(owner, `/teams/${team.id}/members/${crowd[0].user.id}/remove`),
        post(crowd[1], `/teams/${team.id}/leave`),
        post(owner, `/teams/${team.id}/delete`),
        ...crowd.map(switchTo),
        switchTo(owner),
      ]);
      // Done (303), or refused as the team or membership was already gone (404); never an error.
      expect(answers.map((a) => a.status).filter((s) => s !== 303 && s !== 404)).toEqual([]);
      expect(answers[crowd.length + 2].status).toBe(303);
      const strays = await t.dataSource.query(
        `SELECT u.id FROM users u
         LEFT JOIN team_members m ON m.user_id = u.id AND m.team_id = u.current_team_id
         WHERE m.user_id IS NULL`,
      );
      expect(strays).toEqual([]);
      expect(await t.dataSource.getRepository(Team).findOneBy({ id: team.id })).toBeNull();
      for (const p of [owner, ...crowd]) {
        expect((await apiTeam(t, p.token)).name).toBe(`${p.user.name.split(' ')[0]}'s Team`);
      }
    }
  });

  it('should show the current team in every page header with a menu to switch, and come back', async () => {
    const person = await member('Switcher Person');
    const team = await teamOf(person, [], 'Header Team');
    await person.client.submit('/teams', '/teams/switch', {
      team_id: String(person.user.currentTeamId),
    });
    for (const page of ['/dashboard', '/settings/api-tokens', `/teams/${team.id}`]) {
      const html = (await person.client.get(page)).text;
      expect(html).toMatch(
        /<summary><span class="visually-hidden">Current team: <\/span>Switcher&#x27;s Team<\/summary>/,
      );
      expect(html).toContain(`name="team_id" value="${team.id}"`);
      expect(html).toContain(`name="return_to" value="${page}"`);
    }
    const res = await person.client.submit('/settings/api-tokens', '/teams/switch', {
      team_id: String(team.id),
      return_to: '/settings/api-tokens',
    });
    expect(res.headers.location).toBe('/settings/api-tokens');
    expect((await apiTeam(t, person.token)).name).toBe('Header Team');
    const offsite = await person.client.submit('/dashboard', '/teams/switch', {
      team_id: String(team.id),
      return_to: '//evil.example/',
    });
    expect(offsite.headers.location).toBe('/teams');
  });

  it('should count signing in as typing the password: a fresh session needs no confirmation', async () => {
    const owner = await member('Fresh Owner');
    const other = await member('Fresh Other');
    const team = await teamOf(owner, [[other, 'member']], 'Fresh');
    const res = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/delete`);
    expect(res.headers.location).toBe('/teams');
    expect(
      await t.dataSource.getRepository(User).findOneByOrFail({ id: other.user.id }),
    ).toMatchObject({
      currentTeamId: other.user.currentTeamId,
    });
  });

  it('should mail people about changes to their place in a team', async () => {
    const owner = await member('Owner Mail');
    const heir = await member('Heir Mail');
    const gone = await member('Gone Mail');
    const team = await teamOf(
      owner,
      [
        [heir, 'member'],
        [gone, 'member'],
      ],
      'Mailed Team',
    );
    await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/members/${heir.user.id}/role`,
      {
        role: 'admin',
      },
    );
    const role = await t.mail.waitFor({
      to: heir.email,
      subject: 'Your role in Mailed Team changed',
    });
    expect(role.text).toContain('You are now an admin of the team Mailed Team.');
    await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/members/${gone.user.id}/remove`,
    );
    await t.mail.waitFor({ to: gone.email, subject: 'You were removed from Mailed Team' });
    await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/transfer`, {
      user_id: String(heir.user.id),
    });
    await t.mail.waitFor({ to: heir.email, subject: 'You now own Mailed Team' });
    await t.mail.waitFor({ to: owner.email, subject: 'You handed Mailed Team over' });
  });
});
