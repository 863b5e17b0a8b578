import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { User } from '../src/users/user.entity.js';
import { TeamInvitation } from '../src/invitations/team-invitation.entity.js';
import { addMember, createTeam, createToken, createUser, uniqueEmail } from './factories/index.js';
import { visibleText } from './support/html.js';
import { turnOnTwoFactorOnPages } from './support/two-factor.js';
import { signedInPerson, type SignedInPerson } from './support/people.js';
import { apiTeam } from './support/teams.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describe('teams pages', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  interface Person extends SignedInPerson {
    /** An API token of the person's, to see their current team as the API does. */
    token: string;
  }

  /** A person signed up through the pages, with an API token. */
  async function person(name = 'Team Person'): Promise<Person> {
    const someone = await signedInPerson(t, { name, email: uniqueEmail('teams'), register: true });
    return { ...someone, token: (await createToken(t.app, someone.user)).plaintext };
  }

  const currentTeamId = async (user: User) =>
    (await t.dataSource.getRepository(User).findOneByOrFail({ id: user.id })).currentTeamId;
  const members = (teamId: number) => t.dataSource.getRepository(TeamMember).findBy({ teamId });

  async function teamOf(
    owner: Person,
    name: string,
    ...others: [Person, 'admin' | 'member'][]
  ): Promise<Team> {
    const res = await owner.client.submit('/teams', '/teams', { name });
    const team = await t.dataSource
      .getRepository(Team)
      .findOneByOrFail({ id: (await currentTeamId(owner.user))! });
    // On to the new team's page, where people are invited.
    expect(res.headers.location).toBe(`/teams/${team.id}`);
    for (const [other, role] of others) await addMember(t.app, team.id, other.user, role);
    return team;
  }

  it('should list the personal team as current and make a created team current', async () => {
    const ada = await person('Ada');
    let text = visibleText((await ada.client.get('/teams')).text);
    expect(text).toMatch(/Ada's Team adas-team(-\d+)? owner personal current/);

    const team = await teamOf(ada, 'Difference Engine 🚂');
    expect(team.ownerId).toBe(ada.user.id);
    text = visibleText((await ada.client.get('/teams')).text);
    expect(text).toContain('Team "Difference Engine 🚂" was created and is now your current team.');
    expect(await apiTeam(t, ada.token)).toEqual({
      id: team.id,
      name: 'Difference Engine 🚂',
      slug: team.slug,
    });
  });

  it("should switch to one of the person's teams, and refuse anyone else's", async () => {
    const ada = await person();
    const personal = (await currentTeamId(ada.user))!;
    await teamOf(ada, 'Second team');

    const res = await ada.client.submit('/teams', '/teams/switch', { team_id: String(personal) });
    expect(res.headers.location).toBe('/teams');
    expect((await apiTeam(t, ada.token)).id).toBe(personal);

    const stranger = await createUser(t.app);
    const refused = await ada.client.submit('/teams', '/teams/switch', {
      team_id: String(stranger.currentTeamId),
    });
    expect(refused.status).toBe(404);
    expect(await currentTeamId(ada.user)).toBe(personal);

    const garbage = await ada.client.submit('/teams', '/teams/switch', { team_id: 'first' });
    expect(garbage.headers.location).toBe('/teams');
    expect(visibleText((await ada.client.get('/teams')).text)).toContain('Choose a team.');
    expect(await currentTeamId(ada.user)).toBe(personal);
  });

  it('should show a team only to its members', async () => {
    const ada = await person('Ada');
    const bob = await person('Bob');
    const team = await teamOf(ada, 'Members only', [bob, 'member']);
    const outsider = await person('Eve');

    const page = visibleText((await bob.client.get(`/teams/${team.id}`)).text);
    expect(page).toMatch(/Ada \S+ owner/);
    expect(page).toMatch(/Bob \S+ member/);

    const refused = await outsider.client.get(`/teams/${team.id}`);
    expect(refused.status).toBe(404);
    expect(visibleText(refused.text)).not.toContain('Members only');
    expect((await outsider.client.get('/teams/not-a-number')).status).toBe(404);
  });

  it('should let owners and admins invite by email with a role, and no one else', async () => {
    const owner = await person('Owner');
    const admin = await person('Admin');
    const member = await person('Member');
    const team = await teamOf(owner, 'Adders', [admin, 'admin'], [member, 'member']);
    const newcomer = await person('Newcomer');
    // Where a role is chosen, each says what it may do.
    const ownerPage = (await owner.client.get(`/teams/${team.id}`)).text;
    for (const list of ['invite-roles', 'member-roles']) {
      expect(ownerPage).toContain(`aria-describedby="${list}"`);
      expect(ownerPage).toContain(`<ul class="hint role-hint" id="${list}">`);
    }
    expect(visibleText(ownerPage)).toContain('works in the team: makes API tokens that act in it');
    expect(visibleText(ownerPage)).toContain('also invites people, removes members');
    expect((await member.client.get(`/teams/${team.id}`)).text).not.toContain('role-hint');

    const byAdmin = await admin.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/invitations`,
      { email: newcomer.user.email.toUpperCase(), role: 'member' },
    );
    expect(byAdmin.headers.location).toBe(`/teams/${team.id}`);
    expect(
      await t.dataSource
        .getRepository(TeamInvitation)
        .findOneByOrFail({ teamId: team.id, email: newcomer.user.email }),
    ).toMatchObject({ role: 'member', status: 'pending', invitedById: admin.user.id });

    const late = await person('Late');
    const byMember = await member.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/invitations`,
      { email: late.user.email, role: 'admin' },
    );
    expect(byMember.status).toBe(403);
    expect(await members(team.id)).toHaveLength(3);
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ teamId: team.id })).toBe(1);
  });

  it('should say why an invitation is refused, next to the field, and invite no one', async () => {
    const owner = await person('Owner');
    const personal = (await currentTeamId(owner.user))!;
    const member = await person('Member');
    const team = await teamOf(owner, 'Refusals', [member, 'member']);
    const page = `/teams/${team.id}`;

    for (const [fields, message] of [
      [{ email: 'not an email', role: 'member' }, 'Enter a valid email address.'],
      [{ email: member.user.email, role: 'member' }, 'That user is already a member of this team.'],
      [{ email: member.user.email, role: 'owner' }, 'Role must be one of member, admin.'],
    ] as const) {
      const res = await owner.client.submit(page, `${page}/invitations`, fields);
      expect(res.headers.location).toBe(page);
      const shown = (await owner.client.get(page)).text;
      expect(visibleText(shown)).toContain(message);
      // The field at fault is marked and read with its message.
      const field = fields.role === 'owner' ? 'role' : 'email';
      const control = new RegExp(`<(?:input|select) id="invite-${field}"[^>]*>`).exec(shown)![0];
      expect(control).toContain('aria-invalid="true"');
      expect(control).toMatch(new RegExp(`aria-describedby="[^"]*\\b${field}-error\\b`));
    }
    expect(await members(team.id)).toHaveLength(2);
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ teamId: team.id })).toBe(0);

    const intoPersonal = await owner.client.submit(
      `/teams/${personal}`,
      `/teams/${personal}/invitations`,
      {
        email: member.user.email,
        role: 'member',
      },
    );
    expect(intoPersonal.status).toBe(303);
    expect(visibleText((await owner.client.get(`/teams/${personal}`)).text)).toContain(
      'A personal team cannot be left or given other members.',
    );
    expect(await members(personal)).toHaveLength(1);
  });

  it('should move a removed member back to their personal team at once', async () => {
    const owner = await person('Owner');
    const bob = await person('Bob');
    const bobPersonal = (await currentTeamId(bob.user))!;
    const team = await teamOf(owner, 'Removals', [bob, 'member']);
    await bob.client.submit('/teams', '/teams/switch', { team_id: String(team.id) });
    expect((await apiTeam(t, bob.token)).id).toBe(team.id);

    const res = await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/members/${bob.user.id}/remove`,
    );
    expect(res.headers.location).toBe(`/teams/${team.id}`);

    expect((await apiTeam(t, bob.token)).id).toBe(bobPersonal);
    expect((await bob.client.get(`/teams/${team.id}`)).status).toBe(404);
    const switchBack = await bob.client.submit('/teams', '/teams/switch', {
      team_id: String(team.id),
    });
    expect(switchBack.status).toBe(404);
  });

  it('should let a member leave, but not remove the owner, leave a personal team, or let members remove others', async () => {
    const owner = await person('Owner');
    const bob = await person('Bob');
    const carol = await person('Carol');
    const team = await teamOf(owner, 'Leavers', [bob, 'member'], [carol, 'member']);

    const byMember = await bob.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/members/${carol.user.id}/remove`,
    );
    expect(byMember.status).toBe(403);

    const ownerOut = await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/members/${owner.user.id}/remove`,
    );
    expect(ownerOut.status).toBe(409);

    const personal = (await currentTeamId(bob.user))!;
    const leavePersonal = await bob.client.submit(
      `/teams/${personal}`,
      `/teams/${personal}/members/${bob.user.id}/remove`,
    );
    expect(leavePersonal.status).toBe(409);

    const left = await bob.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/members/${bob.user.id}/remove`,
    );
    expect(left.headers.location).toBe('/teams');
    expect((await members(team.id)).map((m) => m.userId).sort()).toEqual(
      [owner.user.id, carol.user.id].sort(),
    );
  });

  it('should refuse a removal from a team the remover does not belong to, changing nothing', async () => {
    const owner = await person('Owner');
    const bob = await person('Bob');
    const team = await teamOf(owner, 'Private', [bob, 'member']);
    const eve = await person('Eve');
    const res = await eve.client.submit(
      '/teams',
      `/teams/${team.id}/members/${bob.user.id}/remove`,
    );
    expect(res.status).toBe(404);
    expect(await members(team.id)).toHaveLength(2);
  });

  it('should show the same header, team menu included, on pages that answer a form and on error pages', async () => {
    const ada = { ...(await signedInPerson(t, { name: 'Header Person' })), token: '' };
    const team = await teamOf(ada, 'Header Team');
    const menu =
      /<summary><span class="visually-hidden">Current team: <\/span>Header Team<\/summary>/;
    const header = (html: string) => ({
      menu: menu.test(html),
      signedIn: visibleText(html).includes('Header Person Sign out'),
    });
    const states: Record<string, string> = {};
    const created = await ada.client.createTokenOnPage({
      name: 'shown once',
      abilities: 'user:read',
      expires_in_days: '30',
    });
    states['new token'] = created.page.text;
    states['regenerated token'] = (
      await ada.client.submit(
        `/settings/api-tokens/${created.id}`,
        `/settings/api-tokens/${created.id}/regenerate`,
      )
    ).text;
    const twoFactor = await turnOnTwoFactorOnPages(t, ada);
    states['two-factor setup'] = twoFactor.setup.text;
    states['recovery codes'] = twoFactor.done.text;
    states['new recovery codes'] = (
      await ada.client.submit('/settings/security', '/settings/two-factor/recovery-codes')
    ).text;
    states['forged form (403)'] = (
      await ada.client.agent.post('/teams').type('form').send('name=Forged')
    ).text;
    states['not a member (404)'] = (await ada.client.get(`/teams/${team.id + 1000}`)).text;
    states['no such page (404)'] = (await ada.client.get('/no-such-page')).text;

    const seen = Object.fromEntries(Object.entries(states).map(([k, html]) => [k, header(html)]));
    expect(seen).toEqual(
      Object.fromEntries(Object.keys(states).map((k) => [k, { menu: true, signedIn: true }])),
    );
  });

  it('should keep a team created by the service layer visible to its owner', async () => {
    const ada = await person();
    const team = await createTeam(t.app, ada.user, 'Made elsewhere');
    expect(visibleText((await ada.client.get('/teams')).text)).toContain('Made elsewhere');
    expect((await ada.client.get(`/teams/${team.id}`)).status).toBe(200);
  });
});
