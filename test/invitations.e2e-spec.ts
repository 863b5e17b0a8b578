import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { ManualClock } from '../src/clock/clock.js';
import { Transactions } from '../src/database/transactions.js';
import { TeamInvitation } from '../src/invitations/team-invitation.entity.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { User } from '../src/users/user.entity.js';
import { createTeam, createToken, uniqueEmail } from './factories/index.js';
import { visibleText } from './support/html.js';
import { PASSWORD, signedInPerson } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { invite, rolesIn, staffedTeam } from './support/teams.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { WebClient } from './support/web-client.js';

const INVITED = /^You are invited to join /;

describe('team invitations', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' }, { clock });
  });
  afterAll(async () => {
    await t.close();
  });

  const invitations = () => t.dataSource.getRepository(TeamInvitation);

  async function ownerWithTeam(name = 'Acme') {
    const owner = await signedInPerson(t, { name: 'Olga Owner' });
    const team = await createTeam(t.app, owner.user, name);
    return { owner, team };
  }

  /** The path of the link in the newest invitation mail to `email`. */
  async function linkFor(email: string, after = 0): Promise<string> {
    const mails = await t.mail.waitForCount({ to: email, subject: INVITED }, after + 1);
    return TestSmtpServer.linkPath(mails.at(-1)!, '/invitations/');
  }

  it('should invite someone with an account, who accepts from the link and lands in the team', async () => {
    const { owner, team } = await ownerWithTeam('Invited Co');
    const invitee = await signedInPerson(t, { name: 'Ivy Invitee' });
    const token = (await createToken(t.app, invitee.user)).plaintext;

    const sent = await invite(owner, team.id, invitee.email.toUpperCase(), 'admin');
    expect(sent.headers.location).toBe(`/teams/${team.id}`);
    const teamPage = visibleText((await owner.client.get(`/teams/${team.id}`)).text);
    expect(teamPage).toContain(`An invitation was sent to ${invitee.email}.`);
    expect(teamPage).toContain('Waiting for an answer');

    const link = await linkFor(invitee.email);
    const mail = t.mail.find({ to: invitee.email, subject: INVITED }).at(-1)!;
    expect(mail.text).toContain(
      'Olga Owner invites you to join the team Invited Co on Tessera as an admin.',
    );
    expect(link).toMatch(/^\/invitations\/[A-Za-z0-9_-]{43}$/);
    const stored = await invitations().findOneByOrFail({ teamId: team.id });
    expect(stored.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(link.split('/').pop());

    const page = await invitee.client.get(link);
    expect(visibleText(page.text)).toContain('Accept and join');
    const accepted = await invitee.client.submit(link, `${link}/accept`);
    expect(accepted.headers.location).toBe(`/teams/${team.id}`);
    expect(await rolesIn(t, team.id)).toEqual({
      [owner.user.id]: 'owner',
      [invitee.user.id]: 'admin',
    });
    const api = await request(t.server).get('/api/v1/team').set('Authorization', `Bearer ${token}`);
    expect(api.body.data.id).toBe(team.id);

    // Once only: the link is spent, and says so.
    const spent = await invitee.client.get(link);
    expect(spent.status).toBe(410);
    expect(visibleText(spent.text)).toContain('This invitation link has already been used.');
    expect((await invitee.client.submit('/dashboard', `${link}/accept`)).status).toBe(410);
  });

  it('should not let someone else use a forwarded link, and change nothing', async () => {
    const { owner, team } = await ownerWithTeam('Forwarded');
    const addressee = uniqueEmail('addressee');
    await invite(owner, team.id, addressee);
    const link = await linkFor(addressee);

    const mallory = await signedInPerson(t, { name: 'Mallory' });
    const page = await mallory.client.get(link);
    expect(visibleText(page.text)).toContain('This invitation is for another address');
    expect(page.text).not.toContain(`${link}/accept`);
    const refused = await mallory.client.submit('/dashboard', `${link}/accept`);
    expect(refused.status).toBe(403);
    expect(visibleText(refused.text)).toContain('This invitation was sent to another address');
    const declined = await mallory.client.submit('/dashboard', `${link}/decline`);
    expect(declined.status).toBe(403);
    expect(await rolesIn(t, team.id)).toEqual({ [owner.user.id]: 'owner' });
    expect((await invitations().findOneByOrFail({ teamId: team.id })).status).toBe('pending');

    // A visitor holding it registers with the address fixed, but joins only once that address
    // is confirmed: the forwarded link alone gets nobody in.
    const visitor = new WebClient(t.server, t.mail);
    const landing = await visitor.get(link);
    const href = /href="(\/register\?invitation[^"]+)"/.exec(landing.text)![1];
    const register = href.replaceAll('&#x3D;', '=').replaceAll('&amp;', '&');
    const form = await visitor.get(register);
    expect(form.text).toContain(`value="${addressee}" readonly`);
    const registered = await visitor.submit(register, '/register', {
      name: 'Adele Addressee',
      email: addressee,
      password: 'correct horse battery',
      password_confirmation: 'correct horse battery',
      invitation: link.split('/').pop()!,
    });
    expect(registered.headers.location).toBe('/register/check-email');
    expect(await visitor.textOf('/register/check-email')).toContain(
      'Your invitation is kept: once the address is confirmed you join the team that invited you',
    );
    expect(Object.keys(await rolesIn(t, team.id))).toHaveLength(1);

    const signedIn = await visitor.login(addressee);
    expect(signedIn.headers.location).toBe('/dashboard');
    expect(Object.keys(await rolesIn(t, team.id))).toHaveLength(1);
    await visitor.confirmEmail(addressee);
    expect(await visitor.textOf('/settings/api-tokens')).toContain(
      `Your email address is confirmed. You can create API tokens now. You joined ${team.name} through your invitation.`,
    );
    const members = await rolesIn(t, team.id);
    expect(Object.values(members).sort()).toEqual(['member', 'owner']);
    expect((await invitations().findOneByOrFail({ teamId: team.id })).status).toBe('accepted');
    expect(visibleText((await visitor.get('/dashboard')).text)).toContain('Forwarded');
  });

  it('should list pending invitations on the dashboard, to accept or decline there', async () => {
    const { owner, team } = await ownerWithTeam('Dashboard Team');
    const other = await createTeam(t.app, owner.user, 'Declined Team');
    const invitee = await signedInPerson(t, { name: 'Dana' });
    await invite(owner, team.id, invitee.email);
    await invite(owner, other.id, invitee.email);
    const dashboard = (await invitee.client.get('/dashboard')).text;
    expect(visibleText(dashboard)).toContain('Join Dashboard Team as a member');
    const [first, second] = await invitations().find({
      where: { email: invitee.email },
      order: { id: 'ASC' },
    });
    const until = first.expiresAt.toISOString().slice(0, 16).replace('T', ' ');
    expect(visibleText(dashboard)).toContain(
      `Invited by Olga Owner; the invitation is open until ${until} UTC.`,
    );
    const accepted = await invitee.client.submit(
      '/dashboard',
      `/invitations/pending/${first.id}/accept`,
    );
    expect(accepted.headers.location).toBe(`/teams/${team.id}`);
    const declined = await invitee.client.submit(
      '/dashboard',
      `/invitations/pending/${second.id}/decline`,
    );
    expect(declined.headers.location).toBe('/dashboard');
    expect(visibleText((await invitee.client.get('/dashboard')).text)).toContain(
      'You declined the invitation to Declined Team.',
    );
    expect(await rolesIn(t, other.id)).toEqual({ [owner.user.id]: 'owner' });

    // Someone else's invitation id is not theirs to answer.
    const stranger = await signedInPerson(t);
    const third = await createTeam(t.app, owner.user, 'Third');
    await invite(owner, third.id, invitee.email);
    const mine = await invitations().findOneByOrFail({ teamId: third.id });
    const res = await stranger.client.submit(
      '/dashboard',
      `/invitations/pending/${mine.id}/accept`,
    );
    expect(res.status).toBe(404);
  });

  it('should say when someone is a member or invited already, and resend or withdraw', async () => {
    const { owner, team } = await ownerWithTeam('Resend Co');
    const member = await signedInPerson(t);
    await t.dataSource
      .getRepository(TeamMember)
      .insert({ teamId: team.id, userId: member.user.id, role: 'member' });
    await invite(owner, team.id, member.email);
    expect(visibleText((await owner.client.get(`/teams/${team.id}`)).text)).toContain(
      'That user is already a member of this team.',
    );

    const email = uniqueEmail('resend');
    await invite(owner, team.id, email);
    const first = await linkFor(email);
    await invite(owner, team.id, email);
    expect(visibleText((await owner.client.get(`/teams/${team.id}`)).text)).toContain(
      'That address has an invitation waiting already',
    );
    const row = await invitations().findOneByOrFail({ teamId: team.id, email });
    await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/invitations/${row.id}/resend`,
    );
    const second = await linkFor(email, 1);
    expect(second).not.toBe(first);
    expect((await request(t.server).get(first)).status).toBe(404);
    expect((await request(t.server).get(second)).status).toBe(200);

    await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/invitations/${row.id}/revoke`,
    );
    expect((await invitations().findOneByOrFail({ id: row.id })).status).toBe('revoked');
    const withdrawn = await request(t.server).get(second);
    expect(withdrawn.status).toBe(410);
    expect(visibleText(withdrawn.text)).toContain(
      'This invitation link no longer works: it was withdrawn.',
    );
    // The replaced link is still only unknown.
    expect(visibleText((await request(t.server).get(first)).text)).toContain(
      'a newer link may have replaced it',
    );
  });

  it('should keep an invitation withdrawn during its resend withdrawn, and mail no new link', async () => {
    const { owner, team } = await ownerWithTeam('Withdrawn Co');
    const email = uniqueEmail('withdrawn');
    await invite(owner, team.id, email);
    await linkFor(email);
    const row = await invitations().findOneByOrFail({ teamId: team.id, email });
    // The withdrawal lands between the resend's own read (still waiting) and its write.
    const transactions = t.app.get(Transactions);
    const run = transactions.run.bind(transactions);
    let withdrawn: number | undefined;
    jest.spyOn(transactions, 'run').mockImplementation(async (work) => {
      if (withdrawn === undefined && new Error().stack?.includes('resend')) {
        const res = await owner.client.submit(
          `/teams/${team.id}`,
          `/teams/${team.id}/invitations/${row.id}/revoke`,
        );
        withdrawn = res.status;
      }
      return run(work);
    });
    const resent = await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/invitations/${row.id}/resend`,
    );
    jest.restoreAllMocks();

    expect(withdrawn).toBe(303);
    expect(resent.status).toBe(404);
    expect(await invitations().findOneByOrFail({ id: row.id })).toMatchObject({
      status: 'revoked',
    });
    await t.app.get(Scheduler).drain();
    expect(t.mail.find({ to: email })).toHaveLength(1);
  });

  it("should say of a deleted team's invitation link that the team may be gone", async () => {
    const { owner, team } = await ownerWithTeam('Short Lived');
    const email = uniqueEmail('gone');
    await invite(owner, team.id, email);
    const link = await linkFor(email);
    await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/delete`);
    const opened = await request(t.server).get(link);
    expect(opened.status).toBe(404);
    expect(visibleText(opened.text)).toContain(
      'This invitation link is not valid. It may be incomplete, or a newer link may have replaced it, or the team may have been deleted.',
    );
  });

  it('should let only owners and admins invite, and refuse another team’s invitation ids', async () => {
    const { owner, team } = await ownerWithTeam('Guarded');
    const plain = await signedInPerson(t);
    await t.dataSource
      .getRepository(TeamMember)
      .insert({ teamId: team.id, userId: plain.user.id, role: 'member' });
    expect((await invite(plain, team.id, uniqueEmail('x'))).status).toBe(403);
    expect(await invitations().countBy({ teamId: team.id })).toBe(0);

    const { owner: otherOwner, team: otherTeam } = await ownerWithTeam('Other');
    await invite(otherOwner, otherTeam.id, uniqueEmail('y'));
    const theirs = await invitations().findOneByOrFail({ teamId: otherTeam.id });
    const res = await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/invitations/${theirs.id}/revoke`,
    );
    expect(res.status).toBe(404);
    expect((await invitations().findOneByOrFail({ id: theirs.id })).status).toBe('pending');
    const personal = await invite(owner, owner.user.currentTeamId!, uniqueEmail('z'));
    expect(personal.status).toBe(303);
    expect(await invitations().countBy({ teamId: owner.user.currentTeamId! })).toBe(0);
  });

  it('should not let someone who registered an invited address join when a scanner opens its confirmation link', async () => {
    const owner = await signedInPerson(t, { name: 'Team Owner' });
    const team = await createTeam(t.app, owner.user, 'Squatted');
    const victim = uniqueEmail('invited');
    expect((await invite(owner, team.id, victim, 'admin')).status).toBe(303);
    // The attacker signs up with the invited address first and signs in.
    const attacker = new WebClient(t.server, t.mail);
    await attacker.register('Not The Invitee', victim, PASSWORD, { confirm: false });
    const mail = await t.mail.waitFor({ to: victim, subject: 'Confirm your email address' });
    // The victim's mail scanner opens every link in the mail.
    for (const link of mail.links) await request(t.server).get(new URL(link).pathname);
    expect(
      (await t.dataSource.getRepository(User).findOneByOrFail({ email: victim })).emailVerifiedAt,
    ).toBeNull();

    const invitation = await t.dataSource
      .getRepository(TeamInvitation)
      .findOneByOrFail({ teamId: team.id });
    const csrf = await attacker.csrfFrom('/dashboard');
    const accepted = await attacker.post(`/invitations/pending/${invitation.id}/accept`, csrf);
    expect(accepted.status).toBe(403);
    expect(await rolesIn(t, team.id)).toEqual({ [owner.user.id]: 'owner' });
  });

  it('should withdraw an invitation when its sender can no longer invite', async () => {
    const { team, owner, adminA, adminB } = await staffedTeam(t);
    const [first, second, third] = [uniqueEmail('one'), uniqueEmail('two'), uniqueEmail('three')];
    const invitees = await Promise.all(
      [first, second, third].map((email) => signedInPerson(t, { email })),
    );
    expect((await invite(adminA, team.id, first, 'admin')).status).toBe(303);
    expect((await invite(adminA, team.id, second, 'admin')).status).toBe(303);
    expect((await invite(adminB, team.id, third, 'admin')).status).toBe(303);
    const linkOf = async (email: string) =>
      TestSmtpServer.linkPath(
        await t.mail.waitFor({ to: email, subject: /^You are invited/ }),
        '/invitations/',
      );
    const [firstLink, secondLink] = [await linkOf(first), await linkOf(second)];

    // Admin A is removed from the team, admin B made a member: their invitations go with it.
    await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/members/${adminA.user.id}/remove`,
    );
    await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/members/${adminB.user.id}/role`,
      {
        role: 'member',
      },
    );
    const listed = (await owner.client.get(`/teams/${team.id}`)).text;
    for (const email of [first, second, third]) expect(listed).not.toContain(email);

    const shown = await invitees[0].client.get(firstLink);
    expect(shown.status).toBe(410);
    expect(visibleText(shown.text)).toContain(
      'This invitation link no longer works: it was withdrawn.',
    );
    const accepted = await invitees[1].client.submit('/dashboard', `${secondLink}/accept`);
    expect(accepted.status).toBe(410);
    const pending = (await invitees[2].client.get('/dashboard')).text;
    expect(pending).not.toContain('Staffed');
    expect(Object.keys(await rolesIn(t, team.id)).map(Number)).not.toEqual(
      expect.arrayContaining(invitees.map((i) => i.user.id)),
    );
    expect(Object.keys(await rolesIn(t, team.id))).toHaveLength(3);
  });

  it('should encode a subject so it reads as it was written when a team name looks like an encoded-word', async () => {
    const owner = await signedInPerson(t);
    const name = '=?utf-8?q?Evil=20Corp?=';
    const team = await createTeam(t.app, owner.user, name);
    const invitee = uniqueEmail('subject');
    await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/invitations`, {
      email: invitee,
      role: 'member',
    });
    const mail = await t.mail.waitFor({ to: invitee });
    expect(mail.subject).toBe(`You are invited to join ${name} on Tessera`);
  });

  it('should refuse an expired link with a clear page, and a tampered one', async () => {
    const { owner, team } = await ownerWithTeam('Expiring');
    const email = uniqueEmail('late');
    await invite(owner, team.id, email);
    const link = await linkFor(email);
    // A week and a second later (TEAM_INVITATION_TTL_DAYS: 7 by default).
    clock.advance(7 * 86_400_000 + 1000);
    const expired = await request(t.server).get(link);
    expect(expired.status).toBe(410);
    expect(visibleText(expired.text)).toContain('This invitation link has expired.');
    const tampered = await request(t.server).get(
      `${link.slice(0, -1)}${link.endsWith('x') ? 'y' : 'x'}`,
    );
    expect(tampered.status).toBe(404);
    expect((await request(t.server).get('/invitations/%00%27')).status).toBe(404);
  });
});
