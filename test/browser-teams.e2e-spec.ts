import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { createToken, createUser, uniqueEmail } from './factories/index.js';
import { launchBrowser, openPage } from './support/browser.js';
import { PASSWORD } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The teams story in Chromium: an owner invites someone by e-mail; they register from the link
 * and land in the team; a third person holding the forwarded link cannot use it; the owner
 * renames the team, makes the newcomer admin, hands the team over and leaves; the new owner
 * deletes it; the API follows every step.
 */
describe('teams in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
    base = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  // The pages confirm destructive actions with the browser's own dialog.
  const newPage = (): Promise<Page> =>
    openPage(browser, base, { viewport: { width: 1100, height: 800 }, acceptDialogs: true });

  async function signIn(page: Page, email: string): Promise<void> {
    await page.goto('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
  }

  async function apiTeam(token: string): Promise<{ id: number; name: string }> {
    const res = await fetch(`${base}/api/v1/team`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    return ((await res.json()) as { data: { id: number; name: string } }).data;
  }

  it('should carry a team from an invitation to its deletion', async () => {
    const ownerEmail = uniqueEmail('owner');
    const owner = await createUser(t.app, {
      name: 'Olivia Owner',
      email: ownerEmail,
      password: PASSWORD,
    });
    const ownerToken = (await createToken(t.app, owner)).plaintext;
    const ownerPage = await newPage();
    await signIn(ownerPage, ownerEmail);

    await ownerPage.goto('/teams');
    await ownerPage.getByLabel('Team name').fill('Lighthouse');
    await ownerPage.getByRole('button', { name: 'Create team' }).click();
    await ownerPage.waitForURL(/\/teams\/\d+$/);
    const teamUrl = ownerPage.url();
    const teamId = Number(teamUrl.split('/').pop());

    // The invitation, by e-mail, to someone without an account.
    const inviteeEmail = uniqueEmail('newcomer');
    await ownerPage.getByLabel('Email address').fill(inviteeEmail);
    await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
    expect(await ownerPage.textContent('main')).toContain(
      `An invitation was sent to ${inviteeEmail}.`,
    );
    const mail = await t.mail.waitFor({ to: inviteeEmail, subject: /^You are invited to join/ });
    const link = TestSmtpServer.linkPath(mail, '/invitations/');

    // A third person, signed in, who was forwarded the link: told so, nothing changes.
    const thirdEmail = uniqueEmail('third');
    await createUser(t.app, { name: 'Theo Third', email: thirdEmail, password: PASSWORD });
    const thirdPage = await newPage();
    await signIn(thirdPage, thirdEmail);
    await thirdPage.goto(link);
    expect(await thirdPage.textContent('main')).toContain('This invitation is for another address');
    expect(await thirdPage.getByRole('button', { name: 'Accept and join' }).count()).toBe(0);

    // The addressee registers from the link, confirms the address and lands in the team.
    const newcomer = await newPage();
    await newcomer.goto(link);
    await newcomer.getByRole('link', { name: 'Create your account' }).click();
    expect(await newcomer.getByLabel('Email').inputValue()).toBe(inviteeEmail);
    expect(await newcomer.getByLabel('Email').getAttribute('readonly')).not.toBeNull();
    // A mistake first: the form comes back with the invited address still fixed.
    await newcomer.getByLabel('Name').fill('Nina Newcomer');
    await newcomer.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await newcomer.getByLabel('Confirm password').fill(`${PASSWORD}-not`);
    await newcomer.getByRole('button', { name: 'Create account' }).click();
    await newcomer.getByText('The passwords do not match.').waitFor();
    expect(await newcomer.getByLabel('Email').inputValue()).toBe(inviteeEmail);
    expect(await newcomer.getByLabel('Email').getAttribute('readonly')).not.toBeNull();
    expect(await newcomer.textContent('main')).toContain(
      'The address your invitation was sent to.',
    );
    await newcomer.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await newcomer.getByLabel('Confirm password').fill(PASSWORD);
    await newcomer.getByRole('button', { name: 'Create account' }).click();
    await newcomer.waitForURL('**/register/check-email');
    const confirm = await t.mail.waitFor({
      to: inviteeEmail,
      subject: 'Confirm your email address',
    });
    await newcomer.goto(TestSmtpServer.linkPath(confirm, '/verify-email/'));
    await newcomer.getByRole('link', { name: 'Sign in to confirm' }).click();
    await newcomer.getByLabel('Email').fill(inviteeEmail);
    await newcomer.getByLabel('Password').fill(PASSWORD);
    await newcomer.getByRole('button', { name: 'Sign in' }).click();
    await newcomer.getByRole('button', { name: 'Confirm my address' }).click();
    await newcomer.waitForURL('**/settings/api-tokens');
    expect(await newcomer.locator('.team-switcher summary').textContent()).toContain('Lighthouse');
    const newcomerUser = await t.dataSource.query('SELECT id FROM users WHERE email = ?', [
      inviteeEmail,
    ]);
    const newcomerToken = (await createToken(t.app, { id: Number(newcomerUser[0].id) })).plaintext;
    expect((await apiTeam(newcomerToken)).id).toBe(teamId);

    // The owner renames the team and makes the newcomer an admin.
    await ownerPage.goto(teamUrl);
    await ownerPage.getByLabel('Name', { exact: true }).fill('Beacon');
    await ownerPage.getByRole('button', { name: 'Rename' }).click();
    await ownerPage.waitForURL(teamUrl);
    expect((await apiTeam(newcomerToken)).name).toBe('Beacon');
    await ownerPage.getByLabel('Role of Nina Newcomer', { exact: true }).selectOption('admin');
    await ownerPage.getByRole('button', { name: 'Change the role of Nina Newcomer' }).click();
    expect(await ownerPage.textContent('main')).toContain('Nina Newcomer is now an admin.');

    // Ownership to the newcomer; the old owner leaves. With nobody chosen, nothing is asked:
    // the page says to choose. Then the question names the member chosen.
    const asked: string[] = [];
    ownerPage.on('dialog', (dialog) => asked.push(dialog.message()));
    await ownerPage.getByRole('button', { name: 'Transfer' }).click();
    await ownerPage.locator('#user_id-error').waitFor();
    expect(await ownerPage.textContent('#user_id-error')).toContain(
      'Choose the member who will own the team.',
    );
    expect(asked).toEqual([]);
    await ownerPage
      .getByLabel('New owner')
      .selectOption({ label: `Nina Newcomer (${inviteeEmail})` });
    await ownerPage.getByRole('button', { name: 'Transfer' }).click();
    expect(await ownerPage.textContent('main')).toContain('Nina Newcomer now owns the team');
    expect(asked).toEqual([
      `Hand Beacon to another member? You become an admin.\n\nNew owner: Nina Newcomer (${inviteeEmail})`,
    ]);
    await ownerPage.getByRole('button', { name: 'Leave team' }).click();
    await ownerPage.waitForURL('**/teams');
    expect((await apiTeam(ownerToken)).name).toBe("Olivia's Team");

    // The new owner deletes it (signing in counts as typing the password).
    await newcomer.goto(teamUrl);
    await newcomer.getByRole('button', { name: 'Delete team' }).click();
    await newcomer.waitForURL('**/teams');
    expect(await newcomer.textContent('main')).toContain('Team "Beacon" was deleted.');
    expect((await apiTeam(newcomerToken)).name).toBe("Nina's Team");
  });
});
