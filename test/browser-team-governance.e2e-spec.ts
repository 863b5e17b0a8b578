import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Actors } from '../src/common/actor.js';
import { TeamPoliciesService } from '../src/teams/team-policies.service.js';
import { TeamsService } from '../src/teams/teams.service.js';
import { addMember, createTeam, createToken, createUser, uniqueEmail } from './factories/index.js';
import { launchBrowser, openPage, pageProblems, screenshotDir } from './support/browser.js';
import { PASSWORD } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { turnOnTwoFactor } from './support/two-factor.js';

/**
 * A team's owner governs its tokens in Chromium: sets the policy on the team page (seeing first
 * which tokens it refuses), sees a member's token refused in the inventory and revokes it; the member sees the reminder. Every
 * page passes axe at 390 and 1280 px and fits a phone's width.
 */
describe("a team's owner governs its tokens in a real browser", () => {
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

  it('should offer a new token only the expiries the team it will act in allows', async () => {
    const email = uniqueEmail('capped');
    const person = await createUser(t.app, { name: 'Cal Capped', email, password: PASSWORD });
    const open = await createTeam(t.app, person, 'Open Sea');
    const capped = await createTeam(t.app, person, 'Short Pier');
    await t.app.get(TeamPoliciesService).setPolicy(Actors.person(person.id), capped.id, {
      requireTwoFactor: false,
      tokenMaxLifetimeDays: 30,
    });
    const page = await signedInPage(email);
    await page.goto('/settings/api-tokens');
    const expires = page.getByLabel('Expires', { exact: true });
    const offered = () =>
      expires.evaluate((select: HTMLSelectElement) =>
        [...select.options].filter((o) => !o.disabled && !o.hidden).map((o) => o.value),
      );
    const date = page.getByLabel(/Expiry date/);
    const day = (days: number) =>
      new Date(Date.now() - (Date.now() % 86_400_000) + days * 86_400_000)
        .toISOString()
        .slice(0, 10);

    // Following the current team, Short Pier: at most 30 days.
    expect(await offered()).toEqual(['7', '30', 'custom']);
    expect(await date.getAttribute('max')).toBe(day(30));
    const problems = await pageProblems(page, 'create form under a team maximum');

    // Pinned to Open Sea, which has none: every expiry, "never" too.
    await page.getByLabel('Acts in').selectOption(String(open.id));
    expect(await offered()).toEqual(['7', '30', '90', '365', 'custom', 'none']);
    expect(await date.getAttribute('max')).toBe(day(3650));
    await expires.selectOption('365');

    // Back to the current team: 365 days is gone, and the default takes its place.
    await page.getByLabel('Acts in').selectOption('current');
    expect(await offered()).toEqual(['7', '30', 'custom']);
    expect(await expires.inputValue()).toBe('30');
    await expect(page.locator('#expires-hint').textContent()).resolves.toBe(
      'Short Pier allows tokens of at most 30 days.',
    );

    await page.getByLabel('Name').fill('pier script');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.waitForURL('**/settings/api-tokens');
    await expect(page.locator('[data-shown-once]').textContent()).resolves.toContain('pier script');
    expect(problems).toEqual([]);
  });

  it('should set the policy, show the refused token in the inventory, and revoke it', async () => {
    const ownerEmail = uniqueEmail('owner');
    const owner = await createUser(t.app, {
      name: 'Olga Owner',
      email: ownerEmail,
      password: PASSWORD,
    });
    const memberEmail = uniqueEmail('member');
    const member = await createUser(t.app, {
      name: 'Milo Member',
      email: memberEmail,
      password: PASSWORD,
    });
    const team = await createTeam(t.app, owner, 'Harbour');
    await addMember(t.app, team.id, member);
    await t.app.get(TeamsService).switchTeam(Actors.person(member.id), team.id);
    const token = await createToken(t.app, member, { name: 'deploy bot' });

    const ownerPage = await signedInPage(ownerEmail);
    // Two-factor sign-in turned on after signing in: the owner may then require it.
    await turnOnTwoFactor(t, { user: owner, email: ownerEmail });
    const problems: string[] = [];

    await ownerPage.goto(`/teams/${team.id}`);
    await ownerPage.getByLabel('Require two-factor sign-in').check();
    await ownerPage.getByLabel('Maximum token lifetime (days)').fill('90');
    await ownerPage.getByRole('button', { name: 'Review the change' }).click();
    // Its effect first: Milo's token would be refused.
    // (Its address is the team page's at once: Back to it must not send the form again.)
    await ownerPage.locator('[data-policy-impact]').waitFor();
    await expect(ownerPage.locator('[data-policy-impact]').textContent()).resolves.toContain(
      'deploy bot',
    );
    problems.push(...(await pageProblems(ownerPage, 'the policy reviewed before it is saved')));
    await ownerPage.getByRole('button', { name: 'Save the policy and tell them' }).click();
    await ownerPage.waitForURL(`**/teams/${team.id}`);
    await expect(ownerPage.getByRole('status').first().textContent()).resolves.toContain(
      'The policy of Harbour was saved.',
    );
    expect(await ownerPage.getByLabel('Require two-factor sign-in').isChecked()).toBe(true);
    problems.push(...(await pageProblems(ownerPage, 'team page with its policy')));
    // Back from there: the team page again, not a form sent a second time.
    await ownerPage.goBack();
    expect(new URL(ownerPage.url()).pathname).toBe(`/teams/${team.id}`);
    expect(await ownerPage.getByLabel('Require two-factor sign-in').isChecked()).toBe(true);

    const refused = await fetch(`${base}/api/v1/team`, {
      headers: { Authorization: `Bearer ${token.plaintext}` },
    });
    expect(refused.status).toBe(403);

    await ownerPage.getByRole('link', { name: 'Tokens' }).click();
    await ownerPage.waitForURL(`**/teams/${team.id}/tokens`);
    const row = ownerPage.locator(`tr[data-token-id="${token.token.id}"]`);
    await expect(row.textContent()).resolves.toContain('deploy bot');
    await expect(row.textContent()).resolves.toContain(
      'its person has not turned on two-factor sign-in',
    );
    problems.push(...(await pageProblems(ownerPage, 'team token inventory')));
    await ownerPage.screenshot({ path: join(screenshotDir(), 'team-tokens.png'), fullPage: true });

    // The member is reminded on every page while Harbour is current.
    const memberPage = await signedInPage(memberEmail);
    await expect(memberPage.locator('[data-two-factor-required]').textContent()).resolves.toContain(
      'Harbour requires two-factor sign-in.',
    );
    problems.push(...(await pageProblems(memberPage, 'dashboard with the two-factor reminder')));
    await memberPage.goto('/settings/api-tokens');
    await expect(
      memberPage.locator('[data-team-refusal]').first().textContent(),
    ).resolves.toContain('Harbour requires two-factor sign-in');
    problems.push(...(await pageProblems(memberPage, 'token list with a refused token')));

    // The owner revokes it by keyboard; the API refuses it from the next request.
    await row.getByRole('button', { name: 'Revoke the token deploy bot of Milo Member' }).focus();
    await ownerPage.keyboard.press('Enter');
    await ownerPage.waitForURL(`**/teams/${team.id}/tokens`);
    await expect(ownerPage.getByRole('status').first().textContent()).resolves.toContain(
      'was revoked',
    );
    expect(await ownerPage.locator(`tr[data-token-id="${token.token.id}"]`).count()).toBe(0);
    problems.push(...(await pageProblems(ownerPage, 'team token inventory, empty')));
    const revoked = await fetch(`${base}/api/v1/team`, {
      headers: { Authorization: `Bearer ${token.plaintext}` },
    });
    expect(revoked.status).toBe(401);

    expect(problems).toEqual([]);
  });
});
