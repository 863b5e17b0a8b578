import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Locator, Page } from 'playwright-core';
import { addMember, createTeam, createToken, createUser, uniqueEmail } from './factories/index.js';
import { launchBrowser, openPage, pageProblems } from './support/browser.js';
import { PASSWORD } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { Actors } from '../src/common/actor.js';
import { TeamsService } from '../src/teams/teams.service.js';

/**
 * A team's owner manages its service accounts in Chromium, by keyboard: makes one, gives it a
 * token shown once, revokes it, deletes the account; reviews a policy before saving it and a
 * member's removal before making it. Every page passes axe at 390 and 1280 px and fits a
 * phone's width.
 */
describe("a team's service accounts and changes reviewed first, in a real browser", () => {
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

  async function signedInPage(email: string): Promise<Page> {
    const page = await openPage(browser, base, { acceptDialogs: true });
    await page.goto('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
    return page;
  }

  /** Moves the focus with Tab until it is on `target` (fails past `max` presses), then Enter. */
  async function pressByKeyboard(page: Page, target: Locator, max = 80): Promise<void> {
    const handle = await target.elementHandle();
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      if (await handle!.evaluate((element) => element === document.activeElement)) {
        await page.keyboard.press('Enter');
        return;
      }
    }
    throw new Error(`${String(target)} cannot be reached by Tab`);
  }

  async function acme() {
    const email = uniqueEmail('owner');
    const owner = await createUser(t.app, { name: 'Olga Owner', email, password: PASSWORD });
    const member = await createUser(t.app, { name: 'Milo Member', password: PASSWORD });
    const team = await createTeam(t.app, owner, 'Harbour');
    await addMember(t.app, team.id, member);
    return { email, owner, member, team, page: await signedInPage(email) };
  }

  it('should make a service account, give it a token shown once, revoke it and delete the account, by keyboard', async () => {
    const { team, page } = await acme();
    const problems: string[] = [];
    await page.goto(`/teams/${team.id}`);
    await pressByKeyboard(page, page.getByRole('link', { name: 'Service accounts' }));
    await page.waitForURL(`**/teams/${team.id}/service-accounts`);
    problems.push(...(await pageProblems(page, 'service accounts, none yet')));

    await page.getByLabel('Name').fill('deploy-bot');
    await page.getByLabel(/Description/).fill('Deploys from CI');
    await pressByKeyboard(page, page.getByRole('button', { name: 'Create service account' }));
    await page.waitForURL(/\/service-accounts\/\d+$/);
    const accountPage = page.url();
    await expect(page.getByRole('status').first().textContent()).resolves.toContain(
      'The service account deploy-bot was created.',
    );
    problems.push(...(await pageProblems(page, 'a service account without tokens')));

    await page.getByLabel('Name').fill('ci');
    await page.getByLabel('team:read', { exact: false }).first().check();
    await page.getByLabel('Expires', { exact: true }).selectOption('7');
    await pressByKeyboard(page, page.getByRole('button', { name: 'Create token' }));
    const reveal = page.locator('[data-shown-once]');
    await reveal.waitFor();
    const value = await page.getByLabel('New token of the service account').inputValue();
    expect(value).toMatch(/^tsr_[0-9A-Za-z]{36}$/);
    // The answer's address is replaced: a reload asks for the page, not the form again.
    await page.waitForURL(accountPage);
    problems.push(...(await pageProblems(page, 'a new token of a service account, shown once')));
    const answer = await fetch(`${base}/api/v1/user/profile`, {
      headers: { Authorization: `Bearer ${value}` },
    });
    expect((await answer.json()).data.type).toBe('service_account');

    await page.goto(accountPage);
    expect(await page.locator('[data-shown-once]').count()).toBe(0);
    await expect(page.locator('[data-service-account-tokens]').textContent()).resolves.toContain(
      'Olga Owner',
    );
    problems.push(...(await pageProblems(page, 'a service account with a token')));

    // The members list names it, labelled.
    await page.goto(`/teams/${team.id}`);
    await expect(page.locator('tr[data-service-account-id]').textContent()).resolves.toContain(
      'service account',
    );
    problems.push(...(await pageProblems(page, 'team page with a service account')));

    await page.goto(accountPage);
    await pressByKeyboard(page, page.getByRole('button', { name: 'Revoke the token ci' }));
    await page.waitForURL(accountPage);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('was revoked');
    const revoked = await fetch(`${base}/api/v1/team`, {
      headers: { Authorization: `Bearer ${value}` },
    });
    expect(revoked.status).toBe(401);

    await pressByKeyboard(page, page.getByRole('button', { name: 'Delete service account' }));
    await page.waitForURL(`**/teams/${team.id}/service-accounts`);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain(
      'The service account deploy-bot was deleted',
    );
    problems.push(...(await pageProblems(page, 'service accounts after a deletion')));
    expect(problems).toEqual([]);
  });

  it("should show a policy's effect before saving it, and a member's tokens before removing them", async () => {
    const { member, team, page } = await acme();
    await t.app.get(TeamsService).switchTeam(Actors.person(member.id), team.id);
    await createToken(t.app, member, { name: 'nightly sync', expiresInDays: 90 });
    const problems: string[] = [];

    await page.goto(`/teams/${team.id}`);
    await page.getByLabel('Maximum token lifetime (days)').fill('30');
    await pressByKeyboard(page, page.getByRole('button', { name: 'Review the change' }));
    // The review answers the form; its address is the team page's at once (Back must not send
    // the form again), so it is waited for by its content.
    await page.locator('[data-policy-impact]').waitFor();
    await expect(page.locator('[data-policy-impact]').textContent()).resolves.toContain(
      'nightly sync',
    );
    problems.push(...(await pageProblems(page, 'a policy reviewed before it is saved')));
    await pressByKeyboard(
      page,
      page.getByRole('button', { name: 'Save the policy and tell them' }),
    );
    await page.waitForURL(`**/teams/${team.id}`);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain(
      'The policy of Harbour was saved.',
    );
    await t.mail.waitFor({ to: member.email, subject: /Harbour changed its token policy/ });

    await pressByKeyboard(page, page.getByRole('link', { name: 'Remove Milo Member' }));
    await page.waitForURL(`**/teams/${team.id}/members/${member.id}/remove`);
    await expect(page.locator('[data-removal-tokens]').textContent()).resolves.toContain(
      'nightly sync',
    );
    problems.push(...(await pageProblems(page, "a member's removal, reviewed first")));
    await pressByKeyboard(page, page.getByRole('button', { name: 'Remove Milo Member' }));
    await page.waitForURL(`**/teams/${team.id}`);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain(
      'The member was removed.',
    );
    expect(problems).toEqual([]);
  });
});
