import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { Server } from 'node:http';
import { Actors } from '../src/common/actor.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { Team } from '../src/teams/team.entity.js';
import { managedRoles } from '../src/teams/team-roles.js';
import { TeamsService } from '../src/teams/teams.service.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TokenPin } from '../src/tokens/token-pin.entity.js';
import { TokenNotFoundError } from '../src/tokens/tokens.errors.js';
import { TokensInTeamService } from '../src/tokens/tokens-in-team.service.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { addMember, createTeam, createToken, createUser } from './factories/index.js';
import { burst, tally } from './support/burst.js';
import { csrfTokenIn, newTokenValueIn, visibleText } from './support/html.js';
import { ServiceAccountsService } from '../src/service-accounts/service-accounts.service.js';
import { startInstances } from './support/instances.js';
import { signedInPerson, type SignedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { turnOnTwoFactor } from './support/two-factor.js';

const api = (server: Server, path: string, token: string) =>
  request(server).get(path).set('Authorization', `Bearer ${token}`);

describe('teams govern the tokens that act in them', () => {
  let t: TestApp;

  beforeAll(async () => {
    // The proxy is this machine: a request names its client's address in X-Forwarded-For.
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', TRUST_PROXY: 'loopback' });
  });
  afterAll(async () => {
    await t.close();
  });

  const drain = () => t.app.get(Scheduler).drain();
  const switchTo = (person: SignedInPerson, teamId: number) =>
    t.app.get(TeamsService).switchTeam(Actors.person(person.user.id), teamId);

  /** Acme, owned by Olive (two-factor on), with Adam as admin and Mia as member (neither has it). */
  async function acme(name = 'Acme') {
    const owner = await signedInPerson(t, { name: 'Olive Owner' });
    const admin = await signedInPerson(t, { name: 'Adam Admin' });
    const member = await signedInPerson(t, { name: 'Mia Member' });
    await turnOnTwoFactor(t, owner);
    const team = await createTeam(t.app, owner.user, name);
    await addMember(t.app, team.id, admin.user, 'admin');
    await addMember(t.app, team.id, member.user, 'member');
    return { owner, admin, member, team };
  }

  const setPolicy = (person: SignedInPerson, teamId: number, fields: Record<string, string>) =>
    person.client.submit(`/teams/${teamId}`, `/teams/${teamId}/policy`, fields);

  describe('policy', () => {
    it('should limit from its page the abilities tokens may use in the team: the API refuses the others, and the tokens page offers only those allowed', async () => {
      const { owner, member, team } = await acme();
      await switchTo(member, team.id);
      const { plaintext } = await createToken(t.app, member.user, { name: 'reader' });
      const teams = t.dataSource.getRepository(Team);

      const saved = await setPolicy(owner, team.id, {
        abilities_listed: 'on',
        allowed_abilities: 'team:read',
      });
      expect(saved.status).toBe(303);
      expect((await teams.findOneByOrFail({ id: team.id })).allowedAbilities).toEqual([
        'team:read',
      ]);
      expect((await api(t.server, '/api/v1/team', plaintext)).status).toBe(200);
      const refused = await api(t.server, '/api/v1/user/profile', plaintext);
      expect([refused.status, refused.body.error.code]).toEqual([
        403,
        'ability_not_allowed_by_team',
      ]);
      expect(await member.client.textOf(`/teams/${team.id}`)).toContain(
        'Abilities tokens may use: team:read',
      );

      // The tokens page offers what Acme allows; a token pinned to Acme with more is refused.
      const form = await member.client.agent.get('/settings/api-tokens');
      expect(form.text).toContain('value="team:read"');
      expect(form.text).not.toContain('value="user:read"');
      expect(visibleText(form.text)).toContain('Only the abilities Acme allows tokens are offered');
      const before = await t.dataSource.getRepository(PersonalAccessToken).count();
      const pinned = await member.client.submit('/settings/api-tokens', '/settings/api-tokens', {
        name: 'pinned',
        abilities: 'user:read',
        team: String(team.id),
        expires_in_days: '30',
      });
      expect(pinned.status).toBe(303);
      expect(await member.client.textOf('/settings/api-tokens')).toContain(
        'Acme does not allow tokens "user:read".',
      );
      expect(await t.dataSource.getRepository(PersonalAccessToken).count()).toBe(before);
      // Nor can a token pinned to Acme be given more later; a rename keeps what it holds.
      const { token: kept } = await createToken(t.app, member.user, {
        name: 'kept',
        abilities: ['team:read'],
        teamId: team.id,
      });
      const page = `/settings/api-tokens/${kept.id}`;
      await member.client.submit(page, page, {
        name: 'kept',
        abilities: ['team:read', 'user:read'],
      });
      expect(await member.client.textOf(page)).toContain('Acme does not allow tokens "user:read".');
      const tokens = t.dataSource.getRepository(PersonalAccessToken);
      expect((await tokens.findOneByOrFail({ id: kept.id })).abilities).toEqual(['team:read']);
      await tokens.update({ id: kept.id }, { abilities: ['team:read', 'user:read'] });
      const renamed = await member.client.submit(page, page, {
        name: 'renamed',
        abilities: ['team:read', 'user:read'],
      });
      expect(renamed.headers.location).toBe(page);
      expect(await tokens.findOneByOrFail({ id: kept.id })).toMatchObject({ name: 'renamed' });

      // None ticked is refused; all ticked is no limit at all.
      await setPolicy(owner, team.id, { abilities_listed: 'on' });
      expect(await owner.client.textOf(`/teams/${team.id}`)).toContain(
        'Allow tokens at least one ability.',
      );
      expect((await teams.findOneByOrFail({ id: team.id })).allowedAbilities).toEqual([
        'team:read',
      ]);
      await owner.client.agent.get(`/teams/${team.id}`);
      const all = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/policy`, {
        abilities_listed: 'on',
        allowed_abilities: [
          'user:read',
          'team:read',
          'members:read',
          'members:write',
          'tokens:read',
          'audit:read',
          'tokens:introspect',
        ],
      });
      expect(all.status).toBe(303);
      expect((await teams.findOneByOrFail({ id: team.id })).allowedAbilities).toBeNull();
      expect((await api(t.server, '/api/v1/user/profile', plaintext)).status).toBe(200);
    });

    it('should refuse a member’s never-expiring token with the right codes until they comply', async () => {
      const { owner, member, team } = await acme();
      await switchTo(member, team.id);
      const forever = await createToken(t.app, member.user, { name: 'forever' });
      expect((await api(t.server, '/api/v1/team', forever.plaintext)).status).toBe(200);

      const saved = await setPolicy(owner, team.id, {
        require_two_factor: 'on',
        token_max_lifetime_days: '90',
      });
      expect(saved.status).toBe(303);
      expect(await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).toMatchObject(
        { requireTwoFactor: true, tokenMaxLifetimeDays: 90 },
      );
      // Every member without two-factor sign-in is told; the owner, who has it, is not.
      await drain();
      const notice = await t.mail.waitFor({
        to: member.email,
        subject: 'Acme requires two-factor sign-in',
      });
      expect(notice.text).toContain('the API refuses your tokens');
      expect(t.mail.find({ to: owner.email, subject: /requires two-factor/ })).toHaveLength(0);

      // The very next request: refused for two-factor, with an RFC 6750 challenge.
      for (const path of ['/api/v1/team', '/api/v1/user/profile']) {
        const refused = await api(t.server, path, forever.plaintext);
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({
          success: false,
          error: { code: 'two_factor_required' },
        });
        expect(refused.headers['www-authenticate']).toBe(
          'Bearer realm="tessera", error="insufficient_scope", error_description="two_factor_required"',
        );
      }
      // The token itself says why (and names no team that refuses it).
      const self = await api(t.server, '/api/v1/token', forever.plaintext);
      expect(self.status).toBe(200);
      expect(self.body.data).toMatchObject({
        binding: 'current',
        team: null,
        team_refusal: 'two_factor_required',
      });
      // The pages remind the member while Acme is current, and the token list says why.
      expect(await member.client.textOf('/dashboard')).toContain(
        'Acme requires two-factor sign-in.',
      );
      expect(await member.client.textOf('/settings/api-tokens')).toContain(
        'Acme requires two-factor sign-in: the API refuses this token there until you turn it on.',
      );
      // The team's inventory gives both reasons at once, and says where the token acts.
      const inventory = visibleText((await owner.client.get(`/teams/${team.id}/tokens`)).text);
      expect(inventory).toContain(
        'Now, as the current team of Mia Member: it follows them when they switch teams. ' +
          'Refused here: its person has not turned on two-factor sign-in. ' +
          'Refused here: it lives longer than 90 days.',
      );

      // With two-factor on, the lifetime is what is refused.
      await turnOnTwoFactor(t, member);
      expect(await member.client.textOf('/dashboard')).not.toContain('requires two-factor');
      const tooLong = await api(t.server, '/api/v1/team', forever.plaintext);
      expect(tooLong.status).toBe(403);
      expect(tooLong.body.error.code).toBe('token_lifetime_exceeds_policy');
      const page = await member.client.textOf(`/settings/api-tokens/${forever.token.id}`);
      expect(page).toContain('Acme allows tokens of at most 90 days');
      // Regenerating offers only the lifetimes Acme allows; 90 days is accepted.
      const form = (await member.client.get(`/settings/api-tokens/${forever.token.id}`)).text;
      expect(form).toContain('<option value="90"');
      expect(form).not.toContain('<option value="365"');
      expect(form).not.toContain('<option value="none"');
      expect(form).not.toContain('<option value="same"');
      const regenerated = await member.client.submit(
        `/settings/api-tokens/${forever.token.id}`,
        `/settings/api-tokens/${forever.token.id}/regenerate`,
        { grace_minutes: '0', lifetime: '90' },
      );
      expect(regenerated.status).toBe(200);
      const ok = await api(t.server, '/api/v1/team', newTokenValueIn(regenerated.text));
      expect(ok.status).toBe(200);
      expect(ok.body.data).toMatchObject({ id: team.id, name: 'Acme' });

      // In another team the policy does not apply: a following token made there (where it may
      // never expire) is refused while Acme is current, and answers there again.
      await switchTo(member, member.user.currentTeamId!);
      const other = await createToken(t.app, member.user, { name: 'other' });
      expect((await api(t.server, '/api/v1/team', other.plaintext)).status).toBe(200);
      await switchTo(member, team.id);
      expect((await api(t.server, '/api/v1/team', other.plaintext)).status).toBe(403);
      await switchTo(member, member.user.currentTeamId!);
      expect((await api(t.server, '/api/v1/team', other.plaintext)).status).toBe(200);

      // The change is in the team's audit log.
      const events = await t.dataSource
        .getRepository(AuditEvent)
        .findBy({ teamId: team.id, event: 'team.policy_changed' });
      expect(events).toHaveLength(1);
    });

    it('should let only the owner change the policy, and the owner only with two-factor on', async () => {
      const { owner, admin, member, team } = await acme('Policy Co');
      for (const person of [admin, member]) {
        const refused = await setPolicy(person, team.id, { require_two_factor: 'on' });
        expect(refused.status).toBe(403);
      }
      const outsider = await signedInPerson(t, { name: 'Oscar Outsider' });
      const ownTeam = outsider.user.currentTeamId!;
      // Another team's id is "not found" (the form on one's own team's page, sent to it).
      const notFound = await outsider.client.post(
        `/teams/${team.id}/policy`,
        await outsider.client.csrfFrom(`/teams/${ownTeam}`),
        {
          token_max_lifetime_days: '1',
        },
      );
      expect(notFound.status).toBe(404);

      // An owner without two-factor sign-in cannot require it.
      const plain = await signedInPerson(t, { name: 'Pat Plain' });
      const plainTeam = await createTeam(t.app, plain.user, 'Plain Co');
      const refused = await setPolicy(plain, plainTeam.id, { require_two_factor: 'on' });
      expect(refused.status).toBe(303);
      expect(await plain.client.textOf(`/teams/${plainTeam.id}`)).toContain(
        'Turn on two-factor sign-in for yourself first',
      );
      // Bad lifetimes are refused on the form, each with what is wrong.
      const errors: Record<string, string> = {
        '0': 'The maximum lifetime is at least 1 day.',
        '3651': 'The maximum lifetime is at most 3650 days.',
        ninety: 'Give the maximum lifetime as a whole number of days, or leave it empty.',
        '1.5': 'Give the maximum lifetime as a whole number of days, or leave it empty.',
      };
      for (const [days, error] of Object.entries(errors)) {
        await setPolicy(owner, team.id, { token_max_lifetime_days: days });
        expect(await owner.client.textOf(`/teams/${team.id}`)).toContain(error);
      }
      for (const id of [team.id, plainTeam.id]) {
        expect(await t.dataSource.getRepository(Team).findOneByOrFail({ id })).toMatchObject({
          requireTwoFactor: false,
          tokenMaxLifetimeDays: null,
        });
      }
    });
  });

  describe('changes shown before they are made', () => {
    const preview = (
      person: SignedInPerson,
      teamId: number,
      fields: Record<string, string | string[]>,
    ) => person.client.submit(`/teams/${teamId}`, `/teams/${teamId}/policy/preview`, fields);

    it("should show which tokens a new policy would refuse or limit, and whose, before saving it; saved, it mails their people, and for a service account its team's owners and admins", async () => {
      const { owner, admin, member, team } = await acme();
      await switchTo(member, team.id);
      const forever = await createToken(t.app, member.user, { name: 'forever' });
      const monthly = await createToken(t.app, member.user, {
        name: 'monthly',
        expiresInDays: 30,
        abilities: ['team:read', 'members:read'],
      });
      const accounts = t.app.get(ServiceAccountsService);
      const bot = await accounts.create(Actors.operator(), team.id, { name: 'deploy-bot' });
      await accounts.createToken(Actors.operator(), team.id, bot.id, {
        name: 'ci',
        abilities: ['team:read'],
        expiresInDays: 90,
      });
      // Adam's token is refused already (he has no second factor, Mia has): the change breaks
      // nothing more of his.
      await turnOnTwoFactor(t, member);
      await switchTo(admin, team.id);
      await t.dataSource.getRepository(Team).update({ id: team.id }, { requireTwoFactor: true });
      await createToken(t.app, admin.user, { name: 'already refused', expiresInDays: 7 });
      const tokens = t.dataSource.getRepository(PersonalAccessToken);

      const fields = {
        require_two_factor: 'on',
        token_max_lifetime_days: '60',
        abilities_listed: 'on',
        allowed_abilities: ['user:read', 'team:read'],
      };
      const shown = await preview(owner, team.id, fields);
      expect(shown.status).toBe(200);
      const text = visibleText(shown.text);
      expect(text).toContain('It would break 3 tokens of 2 accounts');
      expect(text).toMatch(
        /forever Mia Member \(.+\) refused in Acme from now on: it lives longer than the team's maximum of 60 days/,
      );
      expect(text).toContain('monthly Mia Member');
      expect(text).toContain(
        'can no longer use members:read in Acme: the team no longer allows it',
      );
      expect(text).toMatch(
        /ci deploy-bot service account refused in Acme from now on: it lives longer than the team's maximum of 60 days/,
      );
      expect(text).not.toContain('already refused');
      // Nothing saved, nobody told yet.
      expect(await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).toMatchObject(
        {
          tokenMaxLifetimeDays: null,
          allowedAbilities: null,
        },
      );
      await drain();
      for (const person of [owner, admin, member]) {
        expect(t.mail.find({ to: person.email, subject: /changed its token policy/ })).toEqual([]);
      }

      // Its form saves exactly what was shown.
      const form = /<form method="post" action="(\/teams\/\d+\/policy)"[\s\S]*?<\/form>/.exec(
        shown.text,
      )!;
      const hidden = [...form[0].matchAll(/name="([a-z_]+)" value="([^"]*)"/g)].filter(
        ([, name]) => name !== '_csrf',
      );
      const body = hidden.map(([, n, v]) => `${n}=${encodeURIComponent(v)}`).join('&');
      const saved = await owner.client.agent
        .post(form[1])
        .type('form')
        .send(`${body}&_csrf=${encodeURIComponent(csrfTokenIn(shown.text))}`);
      expect(saved.status).toBe(303);
      expect(await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).toMatchObject(
        {
          requireTwoFactor: true,
          tokenMaxLifetimeDays: 60,
          allowedAbilities: ['user:read', 'team:read'],
        },
      );
      expect((await api(t.server, '/api/v1/team', forever.plaintext)).body.error.code).toBe(
        'token_lifetime_exceeds_policy',
      );
      expect((await tokens.findOneByOrFail({ id: monthly.token.id })).revokedAt).toBeNull();

      await drain();
      const toMia = await t.mail.waitFor({
        to: member.email,
        subject: /Acme changed its token policy/,
      });
      expect(toMia.text).toContain('"forever": refused in Acme from now on');
      expect(toMia.text).toContain('Regenerate it with a lifetime of at most 60 days');
      expect(toMia.text).toContain('"monthly": can no longer use members:read in Acme');
      const forBot = await t.mail.waitForCount({ subject: /service accounts affected/ }, 2);
      expect(forBot.flatMap((m) => m.to).sort()).toEqual([admin.email, owner.email].sort());
      expect(forBot[0].text).toContain('"ci" of the service account deploy-bot');
      expect(forBot[0].text).toContain('Give the service account a new token of at most 60 days');
      // Adam is told about the service account's token only, not his own already-refused one.
      expect(forBot.find((m) => m.to.includes(admin.email))!.text).not.toContain('already refused');
    });

    it('should refuse to show the effect of a policy to anyone but the owner, or a policy that cannot be saved', async () => {
      const { owner, admin, team } = await acme();
      const byAdmin = await preview(admin, team.id, { token_max_lifetime_days: '30' });
      expect(byAdmin.status).toBe(403);
      const bad = await preview(owner, team.id, { token_max_lifetime_days: 'soon' });
      expect([bad.status, bad.headers.location]).toEqual([303, `/teams/${team.id}`]);
      expect(await owner.client.textOf(`/teams/${team.id}`)).toContain(
        'Give the maximum lifetime as a whole number of days',
      );
      const none = await preview(owner, team.id, { abilities_listed: 'on' });
      expect(none.status).toBe(303);
      expect(await owner.client.textOf(`/teams/${team.id}`)).toContain(
        'Allow tokens at least one ability.',
      );
      const fine = await preview(owner, team.id, { token_max_lifetime_days: '' });
      expect(visibleText(fine.text)).toContain('It breaks no token');
    });

    it("should show which of a member's tokens stop acting in the team before removing them, to those who may", async () => {
      const { owner, admin, member, team } = await acme();
      await switchTo(member, team.id);
      const following = await createToken(t.app, member.user, { name: 'following' });
      const pinned = await createToken(t.app, member.user, {
        name: 'pinned here',
        teamId: team.id,
      });
      const other = await createTeam(t.app, member.user, 'Elsewhere');
      const elsewhere = await createToken(t.app, member.user, {
        name: 'elsewhere',
        teamId: other.id,
      });
      await switchTo(member, team.id);

      const page = `/teams/${team.id}/members/${member.user.id}/remove`;
      const shown = await admin.client.get(page);
      expect(shown.status).toBe(200);
      const text = visibleText(shown.text);
      expect(text).toContain('Remove Mia Member from Acme?');
      expect(text).toContain('2 of their tokens stop acting in Acme');
      expect(text).toContain('following');
      expect(text).toContain('pinned here');
      expect(text).not.toContain('elsewhere');
      expect(shown.text).toContain(`action="${page}"`);
      // Shown only to whoever may remove them.
      expect(
        (await member.client.get(`/teams/${team.id}/members/${admin.user.id}/remove`)).status,
      ).toBe(403);
      const ownerRow = await admin.client.get(`/teams/${team.id}/members/${owner.user.id}/remove`);
      expect(ownerRow.status).toBe(403);
      const stranger = await signedInPerson(t);
      expect((await stranger.client.get(page)).status).toBe(404);

      const removed = await admin.client.submit(page, page);
      expect(removed.status).toBe(303);
      expect((await api(t.server, '/api/v1/team', pinned.plaintext)).body.error.code).toBe(
        'team_access_lost',
      );
      expect((await api(t.server, '/api/v1/team', following.plaintext)).body.data.id).not.toBe(
        team.id,
      );
      expect((await api(t.server, '/api/v1/team', elsewhere.plaintext)).body.data.id).toBe(
        other.id,
      );
    });
  });

  describe('inventory', () => {
    it('should show owners and admins every token that can act in the team, never its value', async () => {
      const { owner, admin, member, team } = await acme('Inventory Co');
      const following = await createToken(t.app, member.user, { name: 'laptop' });
      const pinned = await member.client.createTokenOnPage({
        name: 'ci pinned',
        abilities: ['team:read'],
        team: String(team.id),
        expires_in_days: '30',
      });
      const elsewhere = await createTeam(t.app, member.user, 'Elsewhere');
      const pinnedElsewhere = await createToken(t.app, member.user, {
        name: 'pinned elsewhere',
        teamId: elsewhere.id,
      });
      const outsider = await createUser(t.app, { name: 'Oscar Outsider' });
      const outsiderToken = await createToken(t.app, outsider, { name: 'outsider token' });
      // Inventory Co is Mia's current team (making Elsewhere made that hers).
      await switchTo(member, team.id);

      for (const viewer of [owner, admin]) {
        const res = await viewer.client.get(`/teams/${team.id}/tokens`);
        expect(res.status).toBe(200);
        const text = visibleText(res.text);
        expect(text).toContain('laptop');
        expect(text).toContain('ci pinned');
        expect(text).toContain('Mia Member');
        expect(text).not.toContain('pinned elsewhere');
        expect(text).not.toContain('outsider token');
        for (const secret of [following.plaintext, pinned.value]) {
          expect(res.text).not.toContain(secret.slice(4));
        }
        const hash = (
          await t.dataSource.getRepository(PersonalAccessToken).findOneByOrFail({
            id: following.token.id,
          })
        ).tokenHash;
        expect(res.text).not.toContain(hash);
      }
      expect((await member.client.get(`/teams/${team.id}/tokens`)).status).toBe(403);
      const stranger = await signedInPerson(t, { name: 'Stan Stranger' });
      expect((await stranger.client.get(`/teams/${team.id}/tokens`)).status).toBe(404);

      // Revoking a token of another team, or of someone outside, is "not found".
      for (const id of [pinnedElsewhere.token.id, outsiderToken.token.id]) {
        const res = await owner.client.submit(
          `/teams/${team.id}/tokens`,
          `/teams/${team.id}/tokens/${id}/revoke`,
        );
        expect(res.status).toBe(404);
      }
      for (const token of [pinnedElsewhere, outsiderToken]) {
        expect((await api(t.server, '/api/v1/token', token.plaintext)).status).toBe(200);
      }
    });

    it('should list and revoke only the tokens acting in the team now, and show no other team’s use of them', async () => {
      const { owner, member, team } = await acme('Now Co');
      // Mia works in her own team: a token following her acts there, not in Now Co.
      const following = await createToken(t.app, member.user, { name: 'personal script' });
      const pinned = await createToken(t.app, member.user, { name: 'now pinned', teamId: team.id });
      const use = (token: string, from: string) =>
        api(t.server, '/api/v1/user/profile', token).set('X-Forwarded-For', from);
      expect((await use(following.plaintext, '198.51.100.7')).status).toBe(200);
      expect((await use(pinned.plaintext, '203.0.113.9')).status).toBe(200);
      await t.app.get(TokenUsageRecorder).flush();

      const inventory = () => owner.client.textOf(`/teams/${team.id}/tokens`);
      const before = await inventory();
      // Every use of a pinned token was in its team.
      expect(before).toContain('now pinned');
      expect(before).toContain('203.0.113.9');
      expect(before).not.toContain('personal script');
      expect(before).not.toContain('198.51.100.7');
      const revoke = () =>
        owner.client.submit(
          `/teams/${team.id}/tokens`,
          `/teams/${team.id}/tokens/${following.token.id}/revoke`,
        );
      expect((await revoke()).status).toBe(404);
      expect((await use(following.plaintext, '198.51.100.7')).status).toBe(200);

      // Now Co becomes her current team: the token acts here now, and may be revoked here, but
      // where it was used before (in her own team) is still not the team's to see.
      await switchTo(member, team.id);
      const after = await inventory();
      expect(after).toContain('personal script');
      expect(after).not.toContain('198.51.100.7');
      expect((await revoke()).status).toBe(303);
      expect((await use(following.plaintext, '198.51.100.7')).status).toBe(401);
    });

    it('should decide a revocation in its write: a token that stopped acting in the team since it was read stays', async () => {
      const { owner, admin, member, team } = await acme('Stale Co');
      await switchTo(member, team.id);
      const following = await createToken(t.app, member.user, { name: 'stale following' });
      const tokens = t.app.get(TokensInTeamService);
      const governing = {
        id: team.id,
        name: team.name,
        policy: { requireTwoFactor: false, tokenMaxLifetimeDays: null, allowedAbilities: null },
      };
      const owners = { role: 'owner' as const, manages: managedRoles('owner') };
      const read = await tokens.getActingIn(governing, following.token.id);

      // Between the read and the write, Mia switches back to her own team.
      await switchTo(member, member.user.currentTeamId!);
      await expect(
        tokens.revokeInTeam(Actors.person(owner.user.id), governing, read, owners),
      ).rejects.toBeInstanceOf(TokenNotFoundError);
      expect((await api(t.server, '/api/v1/user/profile', following.plaintext)).status).toBe(200);

      // An admin read a member's token; the member was made an admin before the write.
      await switchTo(member, team.id);
      const again = await tokens.getActingIn(governing, following.token.id);
      await t.dataSource
        .getRepository(TeamMember)
        .update({ teamId: team.id, userId: member.user.id }, { role: 'admin' });
      await expect(
        tokens.revokeInTeam(Actors.person(admin.user.id), governing, again, {
          role: 'admin',
          manages: managedRoles('admin'),
        }),
      ).rejects.toBeInstanceOf(TokenNotFoundError);
      expect((await api(t.server, '/api/v1/user/profile', following.plaintext)).status).toBe(200);
      // The owner may.
      await tokens.revokeInTeam(Actors.person(owner.user.id), governing, again, owners);
      expect((await api(t.server, '/api/v1/user/profile', following.plaintext)).status).toBe(401);
    });

    it('should revoke a member’s token at once, tell them, and log it in both logs, once under a burst', async () => {
      const { owner, admin, member, team } = await acme('Revoke Co');
      await switchTo(member, team.id);
      const laptop = await createToken(t.app, member.user, { name: 'lost laptop' });
      const ownerToken = await createToken(t.app, owner.user, { name: 'owner script' });

      // An admin manages members, not the owner.
      const refused = await admin.client.submit(
        `/teams/${team.id}/tokens`,
        `/teams/${team.id}/tokens/${ownerToken.token.id}/revoke`,
      );
      expect(refused.status).toBe(403);
      expect((await api(t.server, '/api/v1/token', ownerToken.plaintext)).status).toBe(200);

      const csrf = await owner.client.csrfFrom(`/teams/${team.id}/tokens`);
      const answers = await burst(6, t.server, () =>
        owner.client.post(`/teams/${team.id}/tokens/${laptop.token.id}/revoke`, csrf),
      );
      expect(tally(answers, (r) => String(r.status))).toEqual({ '303': 1, '404': 5 });

      const next = await api(t.server, '/api/v1/user/profile', laptop.plaintext);
      expect(next.status).toBe(401);
      expect(next.body.error.code).toBe('token_revoked');

      await drain();
      const mail = await t.mail.waitFor({
        to: member.email,
        subject: 'A team revoked one of your API tokens',
      });
      expect(mail.text).toContain('"lost laptop" (Revoke Co)');
      expect(
        t.mail.find({ to: member.email, subject: 'A team revoked one of your API tokens' }),
      ).toHaveLength(1);

      const events = await t.dataSource
        .getRepository(AuditEvent)
        .findBy({ event: 'token.revoked', tokenId: laptop.token.id });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        userId: member.user.id,
        teamId: team.id,
        actorUserId: owner.user.id,
      });
      expect(await member.client.textOf('/settings/security-log')).toContain('Revoke Co');
      expect(await owner.client.textOf(`/teams/${team.id}/audit-log`)).toContain('lost laptop');
      // Gone from the inventory.
      expect(await owner.client.textOf(`/teams/${team.id}/tokens`)).not.toContain('lost laptop');
    });
  });

  describe('pinned tokens', () => {
    it('should answer its team whatever the current team, and stop when its person leaves', async () => {
      const { member, team } = await acme('Pinned Co');
      const { value, id } = await member.client.createTokenOnPage({
        name: 'pinned',
        abilities: ['user:read', 'team:read'],
        team: String(team.id),
        expires_in_days: '30',
      });
      expect(await t.dataSource.getRepository(TokenPin).findOneBy({ tokenId: id })).toMatchObject({
        teamId: team.id,
      });
      // Mia's current team is her personal one; the token answers Pinned Co.
      expect((await api(t.server, '/api/v1/team', value)).body.data).toMatchObject({
        id: team.id,
        name: 'Pinned Co',
      });
      const self = await api(t.server, '/api/v1/token', value);
      expect(self.body.data).toMatchObject({ binding: 'pinned', team: { id: team.id } });
      expect(await member.client.textOf('/settings/api-tokens')).toContain('Pinned Co pinned');

      // Regenerating keeps the pin.
      const regenerated = await member.client.submit(
        `/settings/api-tokens/${id}`,
        `/settings/api-tokens/${id}/regenerate`,
        { grace_minutes: '0' },
      );
      const renewed = newTokenValueIn(regenerated.text);
      expect((await api(t.server, '/api/v1/team', renewed)).body.data.id).toBe(team.id);

      await member.client.submit(`/teams/${team.id}`, `/teams/${team.id}/leave`);
      const lost = await api(t.server, '/api/v1/team', renewed);
      expect(lost.status).toBe(403);
      expect(lost.body.error.code).toBe('team_access_lost');
      expect((await api(t.server, '/api/v1/token', renewed)).body.data).toMatchObject({
        binding: 'pinned',
        team: null,
        team_refusal: 'team_access_lost',
      });
    });

    it('should refuse a token pinned to a deleted team, and pinning to a team one is not in', async () => {
      const owner = await signedInPerson(t, { name: 'Dora Deleter' });
      const team = await createTeam(t.app, owner.user, 'Doomed Co');
      const pinned = await createToken(t.app, owner.user, { name: 'doomed', teamId: team.id });
      expect((await api(t.server, '/api/v1/team', pinned.plaintext)).status).toBe(200);
      await t.app.get(TeamsService).deleteTeam(Actors.person(owner.user.id), team.id);
      const lost = await api(t.server, '/api/v1/team', pinned.plaintext);
      expect(lost.status).toBe(403);
      expect(lost.body.error.code).toBe('team_access_lost');

      const other = await createTeam(t.app, await createUser(t.app), 'Not Mine');
      const refused = await owner.client.submit('/settings/api-tokens', '/settings/api-tokens', {
        name: 'sneaky',
        abilities: ['team:read'],
        team: String(other.id),
      });
      expect(refused.status).toBe(303);
      expect(await owner.client.textOf('/settings/api-tokens')).toContain(
        'Choose one of your teams.',
      );
      expect(
        await t.dataSource.getRepository(PersonalAccessToken).findOneBy({ name: 'sneaky' }),
      ).toBeNull();
    });

    it('should follow the current team when no team is chosen, as the service interface says', async () => {
      const { member, team } = await acme('Default Co');
      const { value } = await member.client.createTokenOnPage({
        name: 'default',
        abilities: ['team:read'],
      });
      expect((await api(t.server, '/api/v1/token', value)).body.data.binding).toBe('current');
      expect((await api(t.server, '/api/v1/team', value)).body.data.id).toBe(
        member.user.currentTeamId,
      );
      await switchTo(member, team.id);
      expect((await api(t.server, '/api/v1/team', value)).body.data.id).toBe(team.id);
    });

    it('should never let a token act in a team its person was removed from, under concurrent requests', async () => {
      const { owner, member, team } = await acme('Race Co');
      await switchTo(member, team.id);
      const pinned = await createToken(t.app, member.user, { name: 'pinned', teamId: team.id });
      const following = await createToken(t.app, member.user, { name: 'following' });
      const csrf = await owner.client.csrfFrom(`/teams/${team.id}`);
      const [, ...answers] = await Promise.all([
        owner.client.post(`/teams/${team.id}/members/${member.user.id}/remove`, csrf),
        ...Array.from({ length: 20 }, (_, i) =>
          api(t.server, '/api/v1/team', i % 2 ? pinned.plaintext : following.plaintext),
        ),
      ]);
      const personal = member.user.currentTeamId;
      for (const res of answers) {
        // Before the removal: Race Co; after it: refused (pinned) or the personal team.
        expect(
          (res.status === 200 && [team.id, personal].includes(res.body.data.id)) ||
            (res.status === 403 && res.body.error.code === 'team_access_lost'),
        ).toBe(true);
      }
      const after = await api(t.server, '/api/v1/team', pinned.plaintext);
      expect(after.body.error.code).toBe('team_access_lost');
      expect((await api(t.server, '/api/v1/team', following.plaintext)).body.data.id).not.toBe(
        team.id,
      );
    });
  });
});

describe('a policy change on one instance', () => {
  it('should refuse the very next request on every instance', async () => {
    const deployment = await startInstances(2, { RATE_LIMIT_ENABLED: 'false' });
    try {
      const t = deployment.first;
      const owner = await signedInPerson(t, { name: 'Ivy Instance' });
      const team = await createTeam(t.app, owner.user, 'Two Instances');
      const token = await createToken(t.app, owner.user, { name: 'forever' });
      for (const server of deployment.servers) {
        expect((await api(server, '/api/v1/team', token.plaintext)).status).toBe(200);
      }
      const saved = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/policy`, {
        token_max_lifetime_days: '30',
      });
      expect(saved.status).toBe(303);
      for (const server of deployment.servers) {
        const res = await api(server, '/api/v1/team', token.plaintext);
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('token_lifetime_exceeds_policy');
      }
    } finally {
      await deployment.close();
    }
  });
});
