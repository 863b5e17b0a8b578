import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { User } from '../src/users/user.entity.js';
import { uniqueEmail } from './factories/index.js';
import { EMOJI, SQL, TEMPLATE } from './support/hostile-text.js';
import { visibleText } from './support/html.js';
import { signedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Names, team names and token names are data, whatever they look like: stored as typed, shown
 * escaped on every page and in the API, never run as SQL, a template or markup.
 */
describe('hostile text in every free-text field', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([SQL, TEMPLATE, EMOJI])(
    'should store %j verbatim and show it escaped when it is typed into every free-text field',
    async (text) => {
      const email = uniqueEmail('text');
      const { client, user } = await signedInPerson(t, { name: text, email, register: true });
      expect(user.name).toBe(text);

      await client.submit('/teams', '/teams', { name: text });
      const team = await t.dataSource.getRepository(Team).findOneByOrFail({
        id: (await t.dataSource.getRepository(User).findOneByOrFail({ email })).currentTeamId!,
      });
      expect(team.name).toBe(text);
      expect(team.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);

      const { page, value: plaintext } = await client.createTokenOnPage({
        name: text,
        abilities: ['user:read', 'team:read'],
      });
      expect(page.text).not.toContain('<script>alert(1)</script>');
      expect(visibleText(page.text)).toContain(text.replace(/\s+/g, ' '));
      expect(
        (await t.dataSource.getRepository(PersonalAccessToken).findOneByOrFail({ userId: user.id }))
          .name,
      ).toBe(text);

      const apiProfile = await request(t.server)
        .get('/api/v1/user/profile')
        .set('Authorization', `Bearer ${plaintext}`);
      expect(apiProfile.body.data.name).toBe(text);
      const apiTeam = await request(t.server)
        .get('/api/v1/team')
        .set('Authorization', `Bearer ${plaintext}`);
      expect(apiTeam.body.data.name).toBe(text);

      const profilePage = await client.get('/settings/profile');
      expect(profilePage.text).not.toContain('<script>alert(1)</script>');
      const dashboard = await client.get('/dashboard');
      expect(dashboard.text).not.toContain('<script>alert(1)</script>');
      expect(visibleText(dashboard.text)).not.toContain('Welcome, 49');
      // The text was data, not SQL: the person's row and their team's are still there.
      expect(await t.dataSource.getRepository(User).countBy({ email })).toBe(1);
      expect(await t.dataSource.getRepository(Team).countBy({ id: team.id })).toBe(1);
    },
  );
});
