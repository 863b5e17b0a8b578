import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { Session } from '../src/auth/session.entity.js';
import { ManualClock } from '../src/clock/clock.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TokenAddress } from '../src/tokens/token-address.entity.js';
import { TokenDailyUsage } from '../src/tokens/token-daily-usage.entity.js';
import { hashToken } from '../src/tokens/token-format.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { Actors } from '../src/common/actor.js';
import { Team } from '../src/teams/team.entity.js';
import { TeamMembersService } from '../src/teams/team-members.service.js';
import { TeamsService } from '../src/teams/teams.service.js';
import { createExpiredToken, createTeam, createToken, createUser } from './factories/index.js';
import {
  enabledOptionsIn,
  NEW_TOKEN_VALUE,
  newTokenValueIn,
  selectedOptionIn,
  visibleText,
} from './support/html.js';
import { PASSWORD, signedInPerson, type SignedInPerson } from './support/people.js';
import { forgetPasswordConfirmation } from './support/sessions.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase } from './support/test-database.js';
import { waitFor } from './support/wait-for.js';

const LIST = '/settings/api-tokens';
const DAY_MS = 86_400_000;

describe('token lifecycle: regenerate, edit, history, usage', () => {
  let t: TestApp;
  // The machine's time at each test's start, moved only by the test.
  const clock = new ManualClock();

  beforeAll(async () => {
    // Behind a proxy on loopback, so tests can use a token from several addresses.
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', TRUST_PROXY: 'loopback' }, { clock });
  });
  beforeEach(() => clock.set(Date.now()));
  afterAll(async () => {
    await t.close();
  });

  const tokens = () => t.dataSource.getRepository(PersonalAccessToken);
  const row = (id: number) => tokens().findOneByOrFail({ id });
  const api = (token: string, path = '/api/v1/user/profile') =>
    request(t.server).get(path).set('Authorization', `Bearer ${token}`);
  const page = (person: SignedInPerson, path: string) => person.client.get(path);
  const flush = () => t.app.get(TokenUsageRecorder).flush();

  function regenerate(person: SignedInPerson, id: number, fields: Record<string, string> = {}) {
    return person.client.submit(`${LIST}/${id}`, `${LIST}/${id}/regenerate`, fields);
  }

  describe('regenerate', () => {
    it('should show a new value once, refuse the old one from the next request and keep name, abilities and lifetime', async () => {
      const person = await signedInPerson(t);
      // Created ten days ago: the 30 days are counted again from the regeneration.
      clock.advance(-10 * DAY_MS);
      const { plaintext: old, token } = await createToken(t.app, person.user, {
        name: 'Deploy bot',
        abilities: ['team:read'],
        expiresInDays: 30,
      });
      clock.advance(10 * DAY_MS);

      const res = await regenerate(person, token.id);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const value = NEW_TOKEN_VALUE.exec(res.text)?.[1];
      expect(value).toBeDefined();
      expect(value).not.toBe(old);
      const text = visibleText(res.text);
      expect(text).toContain('The new value of “Deploy bot”');
      expect(text).toContain('The old value is refused from now on.');
      expect(res.text).toContain('data-copy-target="new-token"');
      expect(res.text).toMatch(
        /<a class="button button-quiet" href="\/settings\/api-tokens\/\d+">Done<\/a>/,
      );

      const refused = await api(old, '/api/v1/team');
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('token_revoked');
      expect(refused.headers['www-authenticate']).toBe(
        'Bearer realm="tessera", error="invalid_token"',
      );
      expect((await api(value!, '/api/v1/team')).status).toBe(200);

      const stored = await row(token.id);
      expect(stored).toMatchObject({
        name: 'Deploy bot',
        abilities: ['team:read'],
        tokenHash: hashToken(value!),
        previousTokenHash: hashToken(old),
        lastFour: value!.slice(-4),
      });
      const days = (stored.expiresAt!.getTime() - clock.nowMs()) / DAY_MS;
      expect(days).toBeGreaterThan(29.99);
      expect(days).toBeLessThanOrEqual(30);
      expect(stored.previousValidUntil!.getTime()).toBeLessThanOrEqual(clock.nowMs());
      expect(await tokens().countBy({ userId: person.user.id })).toBe(1);

      // Shown once: the page never shows it again, and no session holds it.
      const again = await page(person, `${LIST}/${token.id}`);
      expect(again.text).not.toContain(value!);
      expect(visibleText(again.text)).toContain(`tsr_…${value!.slice(-4)}`);
      const sessions = JSON.stringify(await t.dataSource.getRepository(Session).find());
      expect(sessions).not.toContain(value!.slice(4, -4));
    });

    it('should keep the old value working through the grace period, count its uses, then refuse it as revoked', async () => {
      const person = await signedInPerson(t);
      const { plaintext: old, token } = await createToken(t.app, person.user, { name: 'CI' });

      const res = await regenerate(person, token.id, { grace_minutes: '10' });
      const value = newTokenValueIn(res.text);
      expect(visibleText(res.text)).toMatch(/The old value keeps working until \d{4}-\d\d-\d\d/);
      const graceEnd = (await row(token.id)).previousValidUntil!.getTime() - clock.nowMs();
      expect(graceEnd).toBeGreaterThan(9 * 60_000);
      expect(graceEnd).toBeLessThanOrEqual(10 * 60_000);

      expect((await api(old).set('User-Agent', 'old-deployer/1.0')).status).toBe(200);
      expect((await api(old)).status).toBe(200);
      expect((await api(value)).status).toBe(200);
      await flush();
      const counted = await row(token.id);
      expect(counted.previousRequests).toBe(2);
      expect(counted.previousLastUsedAt).not.toBeNull();
      const during = visibleText((await page(person, `${LIST}/${token.id}`)).text);
      expect(during).toMatch(
        /Old value Works until [^;]+; used 2 times since the token was regenerated, last at/,
      );

      // The grace period ends: ten minutes later.
      clock.advance(10 * 60_000 + 1000);
      const refused = await api(old);
      expect(refused.status).toBe(401);
      expect(refused.body.error).toEqual({
        code: 'token_revoked',
        message:
          'This value of the bearer token was replaced when the token was regenerated; use the new value.',
      });
      expect((await api(value)).status).toBe(200);
      expect(visibleText((await page(person, `${LIST}/${token.id}`)).text)).toMatch(
        /Old value Refused since [^;]+; used 2 times/,
      );

      // Regenerated again: only the value just replaced is still known; the first is unknown.
      const third = newTokenValueIn((await regenerate(person, token.id)).text);
      expect((await api(old)).body.error.code).toBe('invalid_token');
      expect((await api(value)).body.error.code).toBe('token_revoked');
      expect((await api(third)).status).toBe(200);
      expect((await row(token.id)).previousRequests).toBe(0);
    });

    it('should refuse a grace period outside 0 to 1440 minutes and change nothing', async () => {
      const person = await signedInPerson(t);
      const { plaintext, token } = await createToken(t.app, person.user);
      for (const [grace, message] of [
        ['1441', 'The grace period is at most 1440 minutes.'],
        ['-5', 'Give the grace period as a whole number of minutes.'],
        ['ten', 'Give the grace period as a whole number of minutes.'],
      ]) {
        const res = await regenerate(person, token.id, { grace_minutes: grace });
        expect(res.status).toBe(303);
        expect(res.headers.location).toBe(`${LIST}/${token.id}`);
        const again = await page(person, `${LIST}/${token.id}`);
        expect(visibleText(again.text)).toContain(message);
        expect(again.text).toContain(`value="${grace}"`);
      }
      expect((await row(token.id)).tokenHash).toBe(hashToken(plaintext));
    });

    it('should ask for the password when it was typed more than 15 minutes ago, then regenerate as asked', async () => {
      const person = await signedInPerson(t);
      const { plaintext, token } = await createToken(t.app, person.user);
      forgetPasswordConfirmation(clock);

      const asked = await regenerate(person, token.id, { grace_minutes: '10' });
      expect(asked.status).toBe(303);
      expect(asked.headers.location).toBe(
        `/confirm-password?return_to=${encodeURIComponent(`${LIST}/${token.id}`)}`,
      );
      expect((await row(token.id)).tokenHash).toBe(hashToken(plaintext));
      expect((await api(plaintext)).status).toBe(200);

      const confirmed = await person.client.submit(asked.headers.location, '/confirm-password', {
        password: PASSWORD,
        return_to: `${LIST}/${token.id}`,
      });
      expect(confirmed.headers.location).toBe('/confirm-password/continue');
      const done = await person.client.resume();
      expect(done.status).toBe(200);
      expect(newTokenValueIn(done.text)).not.toBe(plaintext);
      // With the grace period that was chosen before the password was asked.
      expect(visibleText(done.text)).toMatch(/The old value keeps working until \d{4}-\d\d-\d\d/);
      expect((await api(plaintext)).status).toBe(200);
    });

    it('should not contradict a recent use while its counts are not written yet', async () => {
      const person = await signedInPerson(t);
      const { plaintext, token } = await createToken(t.app, person.user);
      // Used a moment ago; the minute's usage (addresses, daily counts) not written yet.
      expect((await api(plaintext)).status).toBe(200);
      await waitFor(async () => (await row(token.id)).lastUsedAt !== null);
      const text = visibleText((await page(person, `${LIST}/${token.id}`)).text);
      expect(text).toMatch(/Last used (just now|1 minute ago)/);
      expect(text).not.toContain('No use recorded yet');
      expect(text).not.toContain('No requests in the last 30 days');
      expect(text).toContain('they show here within a minute of its first use');
      expect(text).toContain('so the first shows here within a minute');
    });

    it("should not say a revoked token's old value still works", async () => {
      const person = await signedInPerson(t);
      const { plaintext: old, token } = await createToken(t.app, person.user, { name: 'Gone' });
      await regenerate(person, token.id, { grace_minutes: '60' });
      expect(visibleText((await page(person, `${LIST}/${token.id}`)).text)).toMatch(
        /Old value Works until \d{4}-\d\d-\d\d/,
      );
      await person.client.submit(`${LIST}/${token.id}`, `${LIST}/${token.id}/revoke`);

      expect((await api(old)).body.error.code).toBe('token_revoked');
      const text = visibleText((await page(person, `${LIST}/${token.id}`)).text);
      expect(text).not.toContain('Works until');
      const revokedAt = (await row(token.id)).revokedAt!;
      expect(text).toContain(`Old value Refused since ${revokedAt.toISOString().slice(0, 10)}`);
    });

    it('should refuse to regenerate a revoked token', async () => {
      const person = await signedInPerson(t);
      const { token } = await createToken(t.app, person.user);
      await person.client.submit(LIST, `${LIST}/${token.id}/revoke`);
      const before = await row(token.id);

      const res = await regenerate(person, token.id);
      expect(res.headers.location).toBe(`${LIST}/${token.id}`);
      expect(visibleText((await page(person, `${LIST}/${token.id}`)).text)).toContain(
        'This token was revoked and cannot be changed; create a new one.',
      );
      expect((await row(token.id)).tokenHash).toBe(before.tokenHash);
    });

    it('should give no grace to the old value of a token when it is regenerated after it expired', async () => {
      const person = await signedInPerson(t);
      // Made 31 days ago for 30 days: expired yesterday.
      clock.advance(-31 * DAY_MS);
      const { plaintext: old, token } = await createToken(t.app, person.user, {
        expiresInDays: 30,
      });
      clock.advance(31 * DAY_MS);
      const expired = await request(t.server)
        .get('/api/v1/user/profile')
        .set('Authorization', `Bearer ${old}`);
      expect(expired.body.error.code).toBe('token_expired');
      const page = `/settings/api-tokens/${token.id}`;
      const res = await person.client.submit(page, `${page}/regenerate`, { grace_minutes: '60' });
      expect(res.status).toBe(200);
      expect(visibleText(res.text)).toContain('The old value is refused from now on.');
      const value = newTokenValueIn(res.text);
      const api = (bearer: string) =>
        request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${bearer}`);
      const refused = await api(old);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('token_revoked');
      expect((await api(value)).status).toBe(200);
    });
  });

  describe("a lifetime at the team's maximum", () => {
    it('should accept a token made for exactly the maximum, whatever the clocks, and give advice that works', async () => {
      const person = await signedInPerson(t);
      const early = await createToken(t.app, person.user, { name: 'early', expiresInDays: 90 });
      const team = await createTeam(t.app, person.user, 'Exact Co');
      await t.dataSource.getRepository(Team).update({ id: team.id }, { tokenMaxLifetimeDays: 30 });

      // The form's default, "In 30 days", following Exact Co.
      const made = await person.client.createTokenOnPage({
        name: 'exact',
        abilities: ['team:read'],
        expires_in_days: '30',
      });
      expect(made.page.status).toBe(200);
      expect((await api(made.value, '/api/v1/team')).body).toMatchObject({
        success: true,
        data: { id: team.id },
      });
      // The app's clock a second and a half ahead of the database's (on another machine).
      clock.advance(1500);
      const ahead = await person.client.createTokenOnPage({
        name: 'ahead',
        abilities: ['team:read'],
        expires_in_days: '30',
      });
      expect((await api(ahead.value, '/api/v1/team')).status).toBe(200);

      // A token that does live longer is refused, and its page's advice makes it work.
      const refused = await api(early.plaintext, '/api/v1/team');
      expect(refused.body.error.code).toBe('token_lifetime_exceeds_policy');
      expect(visibleText((await page(person, `${LIST}/${early.token.id}`)).text)).toContain(
        'Exact Co allows tokens of at most 30 days: the API refuses this one there. Regenerate it with a lifetime of at most 30 days.',
      );
      const regenerated = await regenerate(person, early.token.id, { lifetime: '30' });
      expect(regenerated.status).toBe(200);
      expect((await api(newTokenValueIn(regenerated.text), '/api/v1/team')).status).toBe(200);
    });
  });

  describe('edit', () => {
    it('should rename a token and change its abilities without changing its value', async () => {
      const person = await signedInPerson(t);
      const { plaintext, token } = await createToken(t.app, person.user, { name: 'Laptop' });
      const res = await person.client.submit(`${LIST}/${token.id}`, `${LIST}/${token.id}`, {
        name: '  Work laptop ',
        abilities: 'team:read',
      });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(`${LIST}/${token.id}`);
      expect(visibleText((await page(person, `${LIST}/${token.id}`)).text)).toContain(
        'Token "Work laptop" was saved. Its value did not change.',
      );
      expect(await row(token.id)).toMatchObject({
        name: 'Work laptop',
        abilities: ['team:read'],
        tokenHash: hashToken(plaintext),
      });
      expect((await api(plaintext, '/api/v1/team')).status).toBe(200);
      const scoped = await api(plaintext, '/api/v1/user/profile');
      expect(scoped.status).toBe(403);
      expect(scoped.body.error.code).toBe('insufficient_scope');
    });

    it('should send bad input back to the token page with its messages and the values typed', async () => {
      const person = await signedInPerson(t);
      const { token } = await createToken(t.app, person.user, { name: 'Keep me' });
      const res = await person.client.submit(`${LIST}/${token.id}`, `${LIST}/${token.id}`, {
        name: 'x'.repeat(101),
      });
      expect(res.headers.location).toBe(`${LIST}/${token.id}`);
      const shown = await page(person, `${LIST}/${token.id}`);
      const text = visibleText(shown.text);
      expect(text).toContain('Name can be at most 100 characters.');
      expect(text).toContain('Choose at least one ability.');
      expect(shown.text).toContain(`value="${'x'.repeat(101)}"`);
      expect(shown.text).toContain('aria-invalid="true" aria-describedby="name-error"');
      expect((await row(token.id)).name).toBe('Keep me');
    });
  });

  it("should answer 404 for another person's token on every token route and change nothing", async () => {
    const person = await signedInPerson(t);
    const other = await createUser(t.app);
    const { plaintext, token } = await createToken(t.app, other, { name: 'Not yours' });
    const mine = await createToken(t.app, person.user);

    const shown = await page(person, `${LIST}/${token.id}`);
    expect(shown.status).toBe(404);
    expect(shown.text).not.toContain('Not yours');
    const csrf = await person.client.csrfFrom(`${LIST}/${mine.token.id}`);
    expect(
      (
        await person.client.post(`${LIST}/${token.id}`, csrf, {
          name: 'Mine now',
          abilities: 'user:read',
        })
      ).status,
    ).toBe(404);
    expect((await person.client.post(`${LIST}/${token.id}/regenerate`, csrf)).status).toBe(404);
    expect(await row(token.id)).toMatchObject({
      name: 'Not yours',
      tokenHash: hashToken(plaintext),
    });
    expect((await api(plaintext)).status).toBe(200);
    for (const id of ['999999999', 'abc', '0']) {
      expect((await page(person, `${LIST}/${id}`)).status).toBe(404);
    }
  });

  describe("a refused token's page", () => {
    const SAYS_IT_WORKS = ['It works until it is revoked', 'Acts in', 'your current team'];

    it('should say since when and that its person revoked it, and nothing that says it works', async () => {
      const person = await signedInPerson(t);
      const { token } = await createToken(t.app, person.user, { name: 'Forever' });
      await person.client.submit(`${LIST}/${token.id}`, `${LIST}/${token.id}/revoke`);
      const revokedAt = (await row(token.id)).revokedAt!;

      const text = visibleText((await page(person, `${LIST}/${token.id}`)).text);
      expect(text).toContain(
        `The API refuses this token since ${revokedAt.toISOString().slice(0, 10)}`,
      );
      expect(text).toContain('You revoked it.');
      expect(text).toMatch(
        /Refused since \d{4}-\d\d-\d\d \d\d:\d\d UTC: revoked\. You revoked it\./,
      );
      for (const words of SAYS_IT_WORKS) expect(text).not.toContain(words);
    });

    it('should name the team whose owner revoked it', async () => {
      const owner = await signedInPerson(t);
      const member = await signedInPerson(t);
      const team = await createTeam(t.app, owner.user, 'Refusing Co');
      await t.app.get(TeamMembersService).addMember(Actors.operator(), team.id, {
        email: member.email,
        role: 'member',
      });
      const { token } = await createToken(t.app, member.user, { name: 'Pinned', teamId: team.id });
      const revoked = await owner.client.submit(
        `/teams/${team.id}/tokens`,
        `/teams/${team.id}/tokens/${token.id}/revoke`,
      );
      expect(revoked.headers.location).toBe(`/teams/${team.id}/tokens`);

      const text = visibleText((await page(member, `${LIST}/${token.id}`)).text);
      expect(text).toContain('An owner or admin of Refusing Co revoked it.');
      for (const words of SAYS_IT_WORKS) expect(text).not.toContain(words);
    });

    it('should say since when it expired, and offer to regenerate it', async () => {
      const person = await signedInPerson(t);
      const { token } = await createExpiredToken(t.app, person.user, { name: 'Lapsed' });
      const expiresAt = (await row(token.id)).expiresAt!;

      const text = visibleText((await page(person, `${LIST}/${token.id}`)).text);
      expect(text).toContain(
        `The API refuses this token since ${expiresAt.toISOString().slice(0, 10)}`,
      );
      expect(text).toContain('Its lifetime ended. Regenerate it below');
      for (const words of SAYS_IT_WORKS) expect(text).not.toContain(words);
    });
  });

  it('should list active tokens, and revoked and expired ones below as history, each linking to its page', async () => {
    const person = await signedInPerson(t);
    const active = await createToken(t.app, person.user, { name: 'Still good' });
    const revoked = await createToken(t.app, person.user, { name: 'Was revoked' });
    const expired = await createExpiredToken(t.app, person.user, { name: 'Ran out' });
    await person.client.submit(LIST, `${LIST}/${revoked.token.id}/revoke`);

    const html = (await page(person, LIST)).text;
    const [current, history] = html.slice(html.indexOf('Your tokens')).split('Revoked and expired');
    expect(visibleText(current)).toContain('Still good');
    expect(visibleText(current)).not.toMatch(/Was revoked|Ran out/);
    const past = visibleText(history);
    expect(past).toMatch(/Ran out tsr_…\w{4} .* expired \d{4}-\d\d-\d\d/);
    expect(past).toMatch(/Was revoked tsr_…\w{4} .* revoked \d{4}-\d\d-\d\d/);
    for (const { token } of [active, revoked, expired]) {
      expect(html).toContain(`href="${LIST}/${token.id}"`);
    }
    const revokedPage = visibleText((await page(person, `${LIST}/${revoked.token.id}`)).text);
    expect(revokedPage).toMatch(/Was revoked revoked/);
    expect(revokedPage).toMatch(/Refused since \d{4}-\d\d-\d\d \d\d:\d\d UTC: revoked/);
    expect(revokedPage).not.toContain('Regenerate');
  });

  it("should show a token's abilities, dates, last use, last five addresses and requests per day", async () => {
    const person = await signedInPerson(t);
    const { plaintext, token } = await createToken(t.app, person.user, {
      name: 'Usage shown',
      expiresInDays: 90,
    });
    // A second apart, so the addresses' order is the order of the requests.
    const from = (ip: string, agent: string) => {
      clock.advance(1000);
      return api(plaintext).set('X-Forwarded-For', ip).set('User-Agent', agent);
    };
    const chrome =
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    for (let i = 1; i <= 7; i++) {
      expect((await from(`198.51.100.${i}`, 'python-requests/2.31.0')).status).toBe(200);
    }
    expect((await from('2001:db8::7', chrome)).status).toBe(200);
    expect((await from('198.51.100.7', 'curl/8.5.0')).status).toBe(200);
    await flush();
    // Two earlier days, one of them older than the page's 30.
    const day = (ago: number) => new Date(clock.nowMs() - ago * DAY_MS).toISOString().slice(0, 10);
    await t.dataSource.getRepository(TokenDailyUsage).insert([
      { tokenId: token.id, day: day(3), requests: 40 },
      { tokenId: token.id, day: day(45), requests: 999 },
    ]);

    const html = (await page(person, `${LIST}/${token.id}`)).text;
    const text = visibleText(html);
    expect(text).toContain('Usage shown');
    expect(text).toContain(
      'user:read Read your profile (name and email) and your teams: GET /api/v1/user/profile, GET /api/v1/user/teams.',
    );
    expect(text).toContain(
      'team:read Read the team the token acts in (name and slug): GET /api/v1/team.',
    );
    expect(text).toMatch(/Created \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(text).toMatch(/Expires \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(text).toMatch(
      /Last used (just now|\d+ minutes? ago) from 198\.51\.100\.7 with curl 8\.5\.0/,
    );
    expect(html).toMatch(/<time datetime="[\d-]+T[\d:.]+Z" title="[\d-]+ [\d:]+ UTC">/);
    const addresses = text.slice(
      text.indexOf('Recent addresses'),
      text.indexOf('Requests per day'),
    );
    expect(addresses.match(/198\.51\.100\.\d|2001:db8::7/g)).toEqual([
      '198.51.100.7',
      '2001:db8::7',
      '198.51.100.6',
      '198.51.100.5',
      '198.51.100.4',
    ]);
    expect(addresses).toContain('Chrome 131 on Linux');
    expect(addresses).toContain('python-requests 2.31.0');
    expect(await t.dataSource.getRepository(TokenAddress).countBy({ tokenId: token.id })).toBe(5);

    expect(text).toContain('49 requests in the last 30 days (UTC)');
    expect(text).toContain(`${day(0)} 9`);
    expect(text).toContain(`${day(3)} 40`);
    expect(text).toContain(`${day(29)} 0`);
    expect(text).not.toContain(day(45));
    expect(html).toContain('class="bar bar-20"');
    expect(html).toContain('class="bar bar-5"');
  });

  it("should delete a token's usage with the token when it is pruned", async () => {
    const person = await signedInPerson(t);
    const { plaintext, token } = await createToken(t.app, person.user);
    expect((await api(plaintext)).status).toBe(200);
    await flush();
    await person.client.submit(LIST, `${LIST}/${token.id}/revoke`);
    // Ten days later.
    clock.advance(10 * DAY_MS);
    // What `tokens:prune --older-than-days 5` runs.
    expect((await t.app.get(TokensService).pruneDead(5)).deleted).toBeGreaterThanOrEqual(1);
    expect(await tokens().countBy({ id: token.id })).toBe(0);
    expect(await t.dataSource.getRepository(TokenDailyUsage).countBy({ tokenId: token.id })).toBe(
      0,
    );
    expect(await t.dataSource.getRepository(TokenAddress).countBy({ tokenId: token.id })).toBe(0);
  });
});

describe('token expiry on the create form', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await t.close();
  });

  const latest = async (userId: number) =>
    (
      await t.dataSource
        .getRepository(PersonalAccessToken)
        .find({ where: { userId }, order: { id: 'DESC' }, take: 1 })
    )[0];
  const inDays = (date: Date | null) => (date!.getTime() - Date.now()) / DAY_MS;

  it('should default to 30 days, take a date, allow no expiry with a warning, and keep expires_in_days for scripts', async () => {
    const person = await signedInPerson(t);
    const form = await person.client.get(LIST);
    expect(selectedOptionIn(form.text, 'expires_in_days')).toBe('30');
    expect(enabledOptionsIn(form.text, 'expires_in_days')).toEqual([
      '7',
      '30',
      '90',
      '365',
      'custom',
      'none',
    ]);
    expect(visibleText(form.text)).toContain('In 365 days On a date… Never (not recommended)');
    expect(visibleText(form.text)).toContain(
      'No expiry: a token that never expires works until someone revokes it',
    );

    await person.client.submit(LIST, LIST, { name: 'Default', abilities: 'user:read' });
    expect(inDays((await latest(person.user.id)).expiresAt)).toBeCloseTo(30, 2);

    await person.client.submit(LIST, LIST, {
      name: 'Script',
      expires_in_days: '7',
      abilities: 'user:read',
    });
    expect(inDays((await latest(person.user.id)).expiresAt)).toBeCloseTo(7, 2);

    const date = new Date(Date.now() + 45 * DAY_MS).toISOString().slice(0, 10);
    const dated = await person.client.submit(LIST, LIST, {
      name: 'Dated',
      abilities: 'user:read',
      expires_in_days: 'custom',
      expires_at: date,
    });
    expect(dated.status).toBe(200);
    expect((await latest(person.user.id)).expiresAt!.toISOString()).toBe(`${date}T00:00:00.000Z`);

    const never = await person.client.submit(LIST, LIST, {
      name: 'Forever',
      abilities: 'user:read',
      expires_in_days: 'none',
    });
    expect(never.status).toBe(200);
    expect((await latest(person.user.id)).expiresAt).toBeNull();
    expect(visibleText(never.text)).toMatch(
      /Forever tsr_…\w{4} user:read current team [\d-]+ never never Revoke/,
    );
  });

  it('should offer and accept only the lifetimes the team a new token acts in allows', async () => {
    const person = await signedInPerson(t);
    const capped = await createTeam(t.app, person.user, 'Capped Co');
    const tight = await createTeam(t.app, person.user, 'Tight Co');
    const teams = t.dataSource.getRepository(Team);
    await teams.update({ id: capped.id }, { tokenMaxLifetimeDays: 30 });
    await teams.update({ id: tight.id }, { tokenMaxLifetimeDays: 7 });
    await t.app.get(TeamsService).switchTeam(Actors.person(person.user.id), capped.id);
    const day = (days: number) =>
      new Date(Date.now() - (Date.now() % DAY_MS) + days * DAY_MS).toISOString().slice(0, 10);

    const form = (await person.client.get(LIST)).text;
    // Following the current team, the form's first choice: what Capped Co allows.
    expect(selectedOptionIn(form, 'team')).toBe('current');
    expect(enabledOptionsIn(form, 'expires_in_days')).toEqual(['7', '30', 'custom']);
    expect(selectedOptionIn(form, 'expires_in_days')).toBe('30');
    expect(form).toContain(`max="${day(30)}"`);
    expect(visibleText(form)).toContain('Capped Co allows tokens of at most 30 days.');
    // Each choice of "Acts in" says what a token acting there may have, for the page's script.
    expect(form).toContain(
      `<option value="${tight.id}" data-max-days="7" data-last-date="${day(7)}" data-default-expiry="7"`,
    );

    // Each refusal, and the field it marks (the expiry's select, or the date typed).
    const refusals: [Record<string, string>, string, string][] = [
      [{ expires_in_days: '90' }, 'Capped Co allows tokens of at most 30 days.', 'expires'],
      [
        { expires_in_days: 'none' },
        'Capped Co allows tokens of at most 30 days: choose an expiry.',
        'expires',
      ],
      [
        { expires_in_days: 'custom', expires_at: day(31) },
        `Capped Co allows tokens of at most 30 days: choose ${day(30)} at the latest.`,
        'expires-at',
      ],
      [
        { team: String(tight.id), expires_in_days: '30' },
        'Tight Co allows tokens of at most 7 days.',
        'expires',
      ],
    ];
    for (const [fields, message, field] of refusals) {
      const res = await person.client.submit(LIST, LIST, {
        name: 'Too long',
        abilities: 'user:read',
        ...fields,
      });
      expect(res.headers.location).toBe(LIST);
      const again = (await person.client.get(LIST)).text;
      expect(visibleText(again)).toContain(message);
      // The field is marked and read with its message.
      const marked = new RegExp(`<(?:select|input) id="${field}"[^>]*>`).exec(again)![0];
      expect(marked).toContain('aria-invalid="true"');
      const error = /<p class="field-error" id="([^"]+)">/.exec(again)![1];
      expect(marked).toMatch(new RegExp(`aria-describedby="[^"]*\\b${error}\\b`));
    }
    const repo = t.dataSource.getRepository(PersonalAccessToken);
    expect(await repo.countBy({ userId: person.user.id })).toBe(0);

    const fitting: Record<string, string>[] = [
      { expires_in_days: '30' },
      { expires_in_days: 'custom', expires_at: day(30) },
      { team: String(tight.id), expires_in_days: '7' },
    ];
    for (const fields of fitting) {
      const ok = await person.client.submit(LIST, LIST, {
        name: 'Fits',
        abilities: 'user:read',
        ...fields,
      });
      expect(ok.status).toBe(200);
    }
    expect(await repo.countBy({ userId: person.user.id })).toBe(3);
  });

  it('should refuse a date that is not after today or not a date, keeping what was typed', async () => {
    const person = await signedInPerson(t);
    const today = new Date().toISOString().slice(0, 10);
    for (const [value, message] of [
      [today, 'Choose a date after today.'],
      ['2026-02-30', 'Enter a real date, as YYYY-MM-DD.'],
      ['next week', 'Enter the date as YYYY-MM-DD.'],
      ['', 'Enter the date as YYYY-MM-DD.'],
    ]) {
      const res = await person.client.submit(LIST, LIST, {
        name: 'Dated',
        abilities: 'user:read',
        expires_in_days: 'custom',
        expires_at: value,
      });
      expect(res.headers.location).toBe(LIST);
      const again = await person.client.get(LIST);
      expect(visibleText(again.text)).toContain(message);
      expect(selectedOptionIn(again.text, 'expires_in_days')).toBe('custom');
    }
    expect(
      await t.dataSource.getRepository(PersonalAccessToken).countBy({ userId: person.user.id }),
    ).toBe(0);
  });

  describe('with TOKEN_MAX_LIFETIME_DAYS', () => {
    let capped: TestApp;
    beforeAll(async () => {
      capped = await createTestApp({ RATE_LIMIT_ENABLED: 'false', TOKEN_MAX_LIFETIME_DAYS: '60' });
    });
    afterAll(async () => {
      await capped.close();
    });

    it('should offer no "never", refuse it and anything longer than the maximum, and accept what fits', async () => {
      const person = await signedInPerson(capped);
      const form = await person.client.get(LIST);
      expect(form.text).not.toContain('value="none"');
      expect(form.text).not.toContain('value="90"');
      expect(form.text).toContain(
        'max="' +
          new Date(Date.now() - (Date.now() % DAY_MS) + 60 * DAY_MS).toISOString().slice(0, 10) +
          '"',
      );
      expect(visibleText(form.text)).toContain('Tokens here expire within 60 days at most.');

      const refusals: [Record<string, string>, string][] = [
        [{ expires_in_days: 'none' }, 'Tokens may live at most 60 days: choose an expiry.'],
        [{ expires_in_days: '90' }, 'Tokens may live at most 60 days.'],
        [
          {
            expires_in_days: 'custom',
            expires_at: new Date(Date.now() + 61 * DAY_MS).toISOString().slice(0, 10),
          },
          'Choose a date at most 60 days from today',
        ],
      ];
      for (const [fields, message] of refusals) {
        const res = await person.client.submit(LIST, LIST, {
          name: 'Too long',
          abilities: 'user:read',
          ...fields,
        });
        expect(res.headers.location).toBe(LIST);
        expect(visibleText((await person.client.get(LIST)).text)).toContain(message);
      }
      const repo = capped.dataSource.getRepository(PersonalAccessToken);
      expect(await repo.countBy({ userId: person.user.id })).toBe(0);

      const ok = await person.client.submit(LIST, LIST, { name: 'Fits', abilities: 'user:read' });
      expect(ok.status).toBe(200);
      expect(await repo.countBy({ userId: person.user.id })).toBe(1);
    });

    it('should give a token that never expired the maximum lifetime when it is regenerated', async () => {
      const person = await signedInPerson(capped);
      const repo = capped.dataSource.getRepository(PersonalAccessToken);
      const { token } = await createToken(capped.app, person.user, { expiresInDays: 10 });
      await repo.update({ id: token.id }, { expiresAt: null, lifetimeDays: null });
      const res = await person.client.submit(
        `${LIST}/${token.id}`,
        `${LIST}/${token.id}/regenerate`,
      );
      expect(res.status).toBe(200);
      expect(inDays((await repo.findOneByOrFail({ id: token.id })).expiresAt)).toBeCloseTo(60, 2);
    });
  });
});

describe('token usage at shutdown', () => {
  it('should write the usage gathered so far when the app stops', async () => {
    const database = await createTestDatabase({ file: true });
    try {
      const first = await createTestApp({}, { database });
      const user = await createUser(first.app);
      const { plaintext, token } = await createToken(first.app, user);
      for (let i = 0; i < 3; i++) {
        await request(first.server)
          .get('/api/v1/token')
          .set('Authorization', `Bearer ${plaintext}`);
      }
      await first.close();

      const second = await createTestApp({}, { database });
      try {
        const counted = await second.dataSource
          .getRepository(TokenDailyUsage)
          .findBy({ tokenId: token.id });
        expect(counted).toEqual([expect.objectContaining({ requests: 3 })]);
      } finally {
        await second.close();
      }
    } finally {
      await database.drop();
    }
  });
});
