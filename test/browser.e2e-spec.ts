// Functions passed to page.evaluate run in the browser, with its DOM.
/// <reference lib="dom" />
import { Actors } from '../src/common/actor.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ManualClock } from '../src/clock/clock.js';
import { InvitationsService } from '../src/invitations/invitations.service.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';
import { TeamPoliciesService } from '../src/teams/team-policies.service.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { User } from '../src/users/user.entity.js';
import { addMember, createTeam, createToken, createUser, uniqueEmail } from './factories/index.js';
import {
  axeProblems,
  launchBrowser,
  linesOfText,
  openPage,
  screenshotDir,
} from './support/browser.js';
import { PASSWORD } from './support/people.js';
import { forgetPasswordConfirmation } from './support/sessions.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, freePort, type TestApp } from './support/test-app.js';
import { totpCodeAt } from './support/two-factor.js';

/**
 * The words of the tables that a line break cuts in two (such a word has a box on each line;
 * a break after a hyphen, as in "read-|only", is where a line may end), run in the page.
 */
const BROKEN_WORDS = `(() => {
  const found = [];
  for (const cell of document.querySelectorAll('.stack-table td')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of (node.textContent ?? '').matchAll(/[^\\s-]+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) found.push(match[0]);
      }
    }
  }
  return found;
})()`;

/** How many tables reach past the right edge of their card, run in the page. */
const TABLES_PAST_THEIR_CARD = `[...document.querySelectorAll('.stack-table')].filter((table) => {
  const card = table.closest('.card').getBoundingClientRect();
  return table.getBoundingClientRect().right > card.right + 0.5;
}).length`;

describe('in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const shots = screenshotDir();
  const clock = new ManualClock();

  beforeAll(async () => {
    // The API description names the app's public URL as its server, which Swagger UI's
    // Try it out calls: it must be the address the browser uses.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ PORT: String(port), APP_URL: base }, { clock });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const newPage = (viewport = { width: 1100, height: 800 }, origin = base): Promise<Page> =>
    openPage(browser, origin, {
      viewport,
      prepare: (context) =>
        context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin }),
    });

  interface ApiAnswer {
    status: number;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, checked by each test
    body: any;
  }

  async function api(path: string, token: string): Promise<ApiAnswer> {
    const res = await fetch(`${base}${path}`, {
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
    });
    return { status: res.status, body: await res.json() };
  }

  /**
   * Signs up, opens the link in the confirmation mail, signs in from there and confirms with the
   * page's button, then goes to the dashboard.
   */
  async function register(page: Page, name: string, email: string): Promise<void> {
    await page.goto('/register');
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByLabel('Confirm password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/register/check-email');
    const mail = await t.mail.waitFor({ to: email, subject: 'Confirm your email address' });
    await page.goto(TestSmtpServer.linkPath(mail, '/verify-email/'));
    await page.getByRole('link', { name: 'Sign in to confirm' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await page.waitForURL('**/settings/api-tokens');
    await page.goto('/dashboard');
  }

  /** What axe finds wrong with the page as it is now, at 390 and 1280 px; nothing is what passes. */
  const accessibilityProblems = (page: Page, name: string, exceptRules: string[] = []) =>
    axeProblems(page, name, { exceptRules, height: 800 });

  it('should pass axe on every page, in every state a person sees, at 390 and 1280 px wide, light and dark', async () => {
    const page = await newPage();
    const problems: string[] = [];
    const check = async (name: string) =>
      problems.push(...(await accessibilityProblems(page, name)));

    await page.goto('/login');
    await check('sign-in');
    await page.getByLabel('Email').fill(uniqueEmail('nobody'));
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The password is marked, tied to the message and focused, to be typed again.
    await page.locator('#password-error').waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('password');
    expect(await page.getByLabel('Password').getAttribute('aria-describedby')).toBe(
      'password-error',
    );
    await check('sign-in, refused');
    await page.goto('/register');
    await check('register');
    await page.getByLabel('Email').fill('alan@');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Enter a valid email address.').waitFor();
    await check('register, refused');

    const email = uniqueEmail('axe');
    await page.getByLabel('Name').fill('Axe Tester');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByLabel('Confirm password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/register/check-email');
    await check('check your email');
    const confirmation = await t.mail.waitFor({ to: email, subject: 'Confirm your email address' });
    const confirmationLink = TestSmtpServer.linkPath(confirmation, '/verify-email/');
    await page.goto(confirmationLink);
    await check('confirm your email address, signed out');
    await page.getByRole('link', { name: 'Sign in to confirm' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Confirm my address' }).waitFor();
    await check('confirm your email address');
    await page.goto('/settings/security');
    await page.getByText('Confirm your email address first.').waitFor();
    await check('security, address not confirmed yet');
    await page.goto(confirmationLink);
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await page.waitForURL('**/settings/api-tokens');
    await page.goto(confirmationLink);
    await page.getByRole('heading', { name: 'Your email address is confirmed' }).waitFor();
    await check('email address confirmed');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/login?signed_out=1');
    await page.getByText('You signed out.').waitFor();
    await check('sign-in, signed out');
    await page.goto('/login?return_to=%2Fteams&session_ended=1');
    await page.getByText('Your session has ended. Sign in again to go on.').waitFor();
    await check('sign-in, session ended');
    await page.goto('/forgot-password');
    await check('forgot password');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByText('If an account uses that address').waitFor();
    await check('forgot password, link sent');
    const reset = await t.mail.waitFor({ to: email, subject: 'Reset your Tessera password' });
    await page.goto(TestSmtpServer.linkPath(reset, '/reset-password/'));
    await check('reset password');
    await page.goto('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
    await check('dashboard');
    await page.getByRole('link', { name: 'Use the API' }).click();
    await page.getByRole('heading', { name: 'Use the API' }).waitFor();
    await check('use the API');
    await page.goto('/settings/api-tokens');
    await check('API tokens, none yet');
    await page.getByLabel('Name').fill('Checked');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByLabel('New API token').waitFor();
    await check('API tokens, a new token shown');
    await page.reload();
    await check('API tokens, listed');
    for (const [name, path] of [
      ['profile', '/settings/profile'],
      ['change password', '/settings/password'],
      ['sessions', '/settings/sessions'],
      ['security log', '/settings/security-log'],
    ]) {
      await page.goto(path);
      await check(name);
    }
    await page.locator('.account-menu summary').click();
    await check('Account Settings menu, open');
    await page.locator('.team-switcher summary').click();
    await check('team menu, open');

    await page.goto('/teams');
    await check('teams');
    await page.getByLabel('Team name').fill('Accessible Team');
    await page.getByRole('button', { name: 'Create team' }).click();
    // A new team opens, to invite people into.
    await page.waitForURL(/\/teams\/\d+$/);
    await page.getByRole('status').waitFor();
    await check('team, just created, its owner alone');
    const teamUrl = page.url();
    const member = await createUser(t.app, { name: 'Team Mate', email: uniqueEmail('mate') });
    await addMember(t.app, Number(teamUrl.split('/').pop()), member);
    const invitee = uniqueEmail('invitee');
    await page.getByLabel('Email address').fill(invitee);
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText(`An invitation was sent to ${invitee}.`).waitFor();
    await check('team, with a member and an invitation');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log of Accessible Team' }).waitFor();
    await check('team audit log');
    await page.goBack();
    const invitation = await t.mail.waitFor({ to: invitee, subject: /^You are invited to join/ });
    await page.goto(TestSmtpServer.linkPath(invitation, '/invitations/'));
    await check('invitation, for another address');
    const visitor = await newPage();
    await visitor.goto(TestSmtpServer.linkPath(invitation, '/invitations/'));
    problems.push(...(await accessibilityProblems(visitor, 'invitation, for a visitor')));

    await page.goto('/no-such-page');
    await check('not found (404)');
    // A form's address opened as a page leads to the page the form is on.
    await page.goto('/settings/two-factor/disable');
    expect(new URL(page.url()).pathname).toBe('/settings/security');
    await page.goto('/teams');
    await page.locator('form[action="/teams"] input[name="_csrf"]').evaluate((e) => e.remove());
    await page.getByLabel('Team name').fill('Forged');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByText('This form has expired').waitFor();
    await check('forbidden (403)');

    problems.push(...(await serverErrorPageProblems()));
    expect(problems).toEqual([]);
  });

  /** The 500 page, from an app of its own whose database has lost a table. */
  async function serverErrorPageProblems(): Promise<string[]> {
    const broken = await createTestApp();
    try {
      const page = await newPage(
        undefined,
        (await broken.app.getUrl()).replace('[::1]', '127.0.0.1'),
      );
      const email = uniqueEmail('broken');
      await createUser(broken.app, { name: 'Unlucky Person', email, password: PASSWORD });
      await page.goto('/login');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/dashboard');
      await broken.dataSource.query('DROP TABLE team_members');
      await page.goto('/teams');
      await page.getByText('Something went wrong on our side.').waitFor();
      return await accessibilityProblems(page, 'server error (500)');
    } finally {
      await broken.close();
    }
  }

  it('should let a keyboard reach and scroll the API examples on a phone-sized screen', async () => {
    const page = await newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await register(page, 'Keyboard User', uniqueEmail('keys'));
    const examples = page.getByRole('region', { name: 'Try the API' });
    expect(await examples.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);

    const focused = () => examples.evaluate((e) => e === e.ownerDocument.activeElement);
    for (let presses = 0; presses < 20 && !(await focused()); presses++) {
      await page.keyboard.press('Tab');
    }
    expect(await focused()).toBe(true);
    await page.keyboard.press('ArrowRight');
    // Scrolling by keyboard may be animated: wait for it to move.
    await page.waitForFunction((e) => e!.scrollLeft > 0, await examples.elementHandle());
  });

  /** Opens the header's Account Settings menu (a disclosure). */
  async function openAccountMenu(page: Page): Promise<void> {
    await page.locator('.account-menu summary').click();
  }

  it('should reach every Account Settings page by keyboard from the header menu on a 390 px wide screen', async () => {
    const page = await newPage({ width: 390, height: 844 });
    await register(page, 'Grace Hopper', uniqueEmail('narrow'));
    // The header fits: nothing scrolls sideways.
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    for (const [name, path] of [
      ['Profile', '/settings/profile'],
      ['Security', '/settings/security'],
      ['Sessions', '/settings/sessions'],
      ['API Tokens', '/settings/api-tokens'],
      ['Security log', '/settings/security-log'],
    ]) {
      await page.locator('.account-menu summary').focus();
      await page.keyboard.press('Enter');
      const menu = page.getByRole('navigation', { name: 'Account Settings', exact: true });
      const link = menu.getByRole('link', {
        name,
        exact: true,
      });
      const box = (await link.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
      await link.focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(`**${path}`);
    }
    await page.goto('/settings/sessions');
    await expect(page.getByText('This device').isVisible()).resolves.toBe(true);
  });

  it('should go on with the action once the password is confirmed, without asking for it again', async () => {
    const page = await newPage();
    const email = uniqueEmail('resume');
    await register(page, 'Resume Person', email);
    forgetPasswordConfirmation(clock);
    await page.goto('/settings/profile');
    const moved = uniqueEmail('resumed');
    await page.getByRole('textbox', { name: 'Email' }).fill(moved);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL('**/confirm-password?**');
    await page.getByText('Waiting for your password: Change your email address').waitFor();
    const axe = await accessibilityProblems(page, 'password confirmation, with an action waiting');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL('**/settings/profile');
    await page.getByText('follow the link we are mailing to the new one').waitFor();
    const changeMail = await t.mail.waitFor({
      to: moved,
      subject: 'Confirm your new email address',
    });
    // Opened by another account signed in, its page says whose link it is not, and how to go on.
    const other = await newPage();
    await register(other, 'Other Person', uniqueEmail('other'));
    await other.goto(TestSmtpServer.linkPath(changeMail, '/settings/profile/email/'));
    await other.getByText('This link changes the address of another account.').waitFor();
    axe.push(...(await accessibilityProblems(other, "a new address's link, another account's")));
    await other.getByRole('main').getByRole('button', { name: 'Sign out' }).focus();
    await other.keyboard.press('Enter');
    await other.waitForURL('**/login?signed_out=1');
    // The change waits, shown with Resend and Cancel, until its link is followed.
    await page.reload();
    await page.getByText(`Waiting for confirmation: ${moved}`).waitFor();
    axe.push(...(await accessibilityProblems(page, 'profile, a change of address waiting')));
    await page.getByRole('button', { name: `Cancel the change to ${moved}` }).click();
    await page.getByText('The change of address is cancelled').waitFor();
    expect(await page.getByText('Waiting for confirmation').count()).toBe(0);
    expect(axe).toEqual([]);
  });

  it('should not send an action that waited for the password when a link on another site opens the continue page', async () => {
    const page = await newPage();
    const email = uniqueEmail('abandoned');
    await register(page, 'Abandoning Person', email);
    const user = await t.dataSource.getRepository(User).findOneByOrFail({ email });
    forgetPasswordConfirmation(clock);
    await page.goto('/settings/profile');
    const moved = uniqueEmail('never-moved');
    await page.getByRole('textbox', { name: 'Email' }).fill(moved);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Waiting for your password: Change your email address').waitFor();

    // Abandoned: the password is confirmed for another page.
    await page.goto(`/confirm-password?return_to=${encodeURIComponent('/settings/api-tokens')}`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL('**/settings/api-tokens');

    // A page of another site (localhost is another site than 127.0.0.1) links to the continue page.
    const elsewhere = createServer((_req, res) =>
      res
        .writeHead(200, { 'Content-Type': 'text/html' })
        .end(
          `<!doctype html><title>Elsewhere</title><a href="${base}/confirm-password/continue">Look</a>`,
        ),
    );
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = elsewhere.address() as AddressInfo;
      await page.goto(`http://localhost:${port}/`);
      await page.getByRole('link', { name: 'Look' }).click();
      await page.waitForURL('**/confirm-password/continue');
      await page
        .getByText('Tessera goes on with an action you confirmed only when its own pages lead here')
        .waitFor();
    } finally {
      await new Promise((resolve) => elsewhere.close(resolve));
    }
    expect(await t.dataSource.getRepository(User).findOneByOrFail({ id: user.id })).toMatchObject({
      email,
    });
    expect(t.mail.find({ to: moved })).toEqual([]);
  });

  it('should keep one header menu open at a time, close it on Escape, a click elsewhere or the focus leaving it, and keep it on a 390 px screen', async () => {
    const page = await newPage({ width: 390, height: 844 });
    await register(page, 'Menu Person', uniqueEmail('menus'));
    await page.goto('/teams');
    await page.getByLabel('Team name').fill('Second Team');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByText('Team "Second Team" was created').waitFor();
    const account = page.locator('.account-menu');
    const teams = page.locator('.team-switcher');
    const isOpen = (menu: typeof account) => menu.evaluate((e) => (e as HTMLDetailsElement).open);

    await teams.locator('summary').click();
    const current = teams.locator('[aria-current="true"]');
    expect(await current.textContent()).toContain('Second Team');
    const other = teams.getByRole('button', { name: "Switch to Menu's Team" });
    for (const box of [await current.boundingBox(), await other.boundingBox()]) {
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    }
    await account.locator('summary').click();
    expect([await isOpen(account), await isOpen(teams)]).toEqual([true, false]);
    await page.keyboard.press('Escape');
    expect(await isOpen(account)).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Account Settings');
    await teams.locator('summary').click();
    await page.locator('main h1').click();
    expect(await isOpen(teams)).toBe(false);
    // Tabbing out of an open menu closes it: its panel would cover what takes the focus.
    await account.locator('summary').focus();
    await page.keyboard.press('Enter');
    const items = await account.locator('a, button').count();
    for (let i = 0; i <= items; i++) await page.keyboard.press('Tab');
    expect(await isOpen(account)).toBe(false);
    const covered = await page.evaluate(() => {
      const focused = document.activeElement!;
      const box = focused.getBoundingClientRect();
      const top = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
      return top !== null && !focused.contains(top) && !top.contains(focused);
    });
    expect(covered).toBe(false);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
  });

  it('should keep the header to two rows on a phone and one on a laptop, whatever the length of the name', async () => {
    const page = await newPage({ width: 390, height: 844 });
    const email = uniqueEmail('long-name');
    await createUser(t.app, {
      name: 'Maximilian Alexander Featherstonehaugh-Worthington',
      email,
      password: PASSWORD,
    });
    await page.goto('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
    const headerHeight = () =>
      page.locator('.site-header').evaluate((e) => e.getBoundingClientRect().height);
    const problems: string[] = [];
    for (const [width, most] of [
      [390, 110],
      [1280, 70],
    ]) {
      await page.setViewportSize({ width, height: 844 });
      for (const path of ['/dashboard', '/teams', '/settings/security', '/settings/api-tokens']) {
        await page.goto(path);
        const height = await headerHeight();
        if (height > most) problems.push(`${path} at ${width} px: header ${height} px high`);
        const signOut = width === 390 ? '.header-menu-sign-out button' : '.site-user button';
        if (width === 390) await page.locator('.account-menu summary').click();
        if ((await linesOfText(page, signOut)) !== 1) {
          problems.push(`${path} at ${width} px: Sign out not on one line`);
        }
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        if (wide > width) problems.push(`${path} at ${width} px: ${wide} px wide`);
      }
      // The dashboard's slug is one word, on one line.
      await page.goto('/dashboard');
      if ((await linesOfText(page, '.slug')) !== 1) {
        problems.push(`dashboard at ${width} px: the slug is broken`);
      }
    }
    // On a phone the name is in the Account Settings menu.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('.account-menu summary').click();
    await page
      .getByText('Signed in as Maximilian Alexander Featherstonehaugh-Worthington')
      .waitFor();
    // The focus goes through the header in the order it is drawn, Sign out in the menu.
    await page.keyboard.press('Escape');
    await page.goto('/dashboard');
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      order.push(await page.evaluate(() => document.activeElement!.textContent!.trim()));
    }
    expect(order.slice(0, 5)).toEqual([
      'Skip to content',
      'Tessera',
      'Dashboard',
      'Teams',
      'Account Settings',
    ]);
    expect(order[5]).toContain('Team');
    // Two rows: the site's links, then the two menus (centred in their rows).
    const middles = await page.evaluate(() =>
      ['.brand', '.site-nav', '.account-menu summary', '.team-switcher summary'].map((selector) => {
        const box = document.querySelector(selector)!.getBoundingClientRect();
        return Math.round(box.top + box.height / 2);
      }),
    );
    expect(Math.abs(middles[1] - middles[0])).toBeLessThanOrEqual(1);
    expect(middles[2]).toBeGreaterThan(middles[1] + 20);
    expect(Math.abs(middles[3] - middles[2])).toBeLessThanOrEqual(1);
    // Nothing the focus reaches later in the header is drawn on an earlier row (the menus'
    // panels aside).
    const rows = await page.evaluate(() =>
      [...document.querySelectorAll('.site-header a, .site-header summary, .site-header button')]
        .filter((e) => !e.closest('.header-menu-panel, .team-switcher-menu'))
        .map((e) => e.getBoundingClientRect())
        .filter((box) => box.height > 0)
        .map((box) => Math.round(box.top + box.height / 2)),
    );
    expect(rows.every((middle, i) => i === 0 || middle >= rows[i - 1] - 1)).toBe(true);
    await page.locator('.account-menu summary').click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/login?signed_out=1');
    expect(problems).toEqual([]);
  });

  it('should lay out every Account Settings page alike: its sections beside it on a laptop, above it on a phone', async () => {
    const page = await newPage({ width: 1280, height: 900 });
    await register(page, 'Layout Person', uniqueEmail('layout'));
    const sections = [
      ['Profile', '/settings/profile'],
      ['Security', '/settings/security'],
      ['Sessions', '/settings/sessions'],
      ['API Tokens', '/settings/api-tokens'],
      ['Security log', '/settings/security-log'],
      ['Security', '/settings/password'],
    ];
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      const contentWidths = new Set<number>();
      for (const [name, path] of sections) {
        await page.goto(path);
        const nav = page.getByRole('navigation', { name: 'Account Settings sections' });
        expect(await nav.locator('[aria-current="page"]').textContent()).toBe(name);
        const navBox = (await nav.boundingBox())!;
        const content = (await page.locator('.settings-content').boundingBox())!;
        if (width === 1280) expect(navBox.x + navBox.width).toBeLessThanOrEqual(content.x);
        else expect(navBox.y + navBox.height).toBeLessThanOrEqual(content.y);
        // Every card as wide as the content: no page centres a narrow one.
        for (const card of await page.locator('.settings-content .card').all()) {
          expect(Math.round((await card.boundingBox())!.width)).toBe(Math.round(content.width));
        }
        contentWidths.add(Math.round(content.width));
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
          width,
        );
      }
      expect(contentWidths.size).toBe(1);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto('/settings/profile');
    await page.screenshot({ path: join(shots, 'profile.png'), fullPage: true });
  });

  it('should take a person from sign-up to a working token, and revoke it', async () => {
    const page = await newPage();
    await page.goto('/');
    await page.waitForURL('**/login');
    await page.screenshot({ path: join(shots, 'sign-in.png') });
    await page.goto('/register');
    await page.screenshot({ path: join(shots, 'register.png') });

    await register(page, 'Ada Lovelace', uniqueEmail('browser'));
    await expect(
      page.getByRole('heading', { name: 'Welcome, Ada Lovelace' }).isVisible(),
    ).resolves.toBe(true);
    await page.screenshot({ path: join(shots, 'dashboard.png') });

    await openAccountMenu(page);
    await page.getByRole('link', { name: 'API Tokens' }).first().click();
    await page.waitForURL('**/settings/api-tokens');
    await page.getByLabel('Name').fill('My laptop');
    await page.getByLabel('Expires').selectOption('30');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.waitForURL('**/settings/api-tokens');

    const token = await page.getByLabel('New API token').inputValue();
    expect(token).toMatch(/^tsr_[0-9A-Za-z]{36}$/);
    expect(await page.getByText('it will not be shown again').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(token);
    await page.screenshot({ path: join(shots, 'api-tokens-new.png'), fullPage: true });

    const profile = await api('/api/v1/user/profile', token);
    expect(profile.status).toBe(200);
    expect(profile.body.data.name).toBe('Ada Lovelace');

    await page.reload();
    expect(await page.getByLabel('New API token').count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    // The reload asked for the page again; it did not post the form a second time.
    expect(await page.getByRole('row', { name: /My laptop/ }).count()).toBe(1);
    const row = page.getByRole('row', { name: /My laptop/ });
    expect(await row.textContent()).toContain(`tsr_…${token.slice(-4)}`);
    await page.screenshot({ path: join(shots, 'api-tokens.png'), fullPage: true });

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('Token "My laptop" was revoked.').waitFor();
    const refused = await api('/api/v1/user/profile', token);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('token_revoked');
  });

  it("should regenerate a token from its page, show the new value once, and read the token's usage", async () => {
    const page = await newPage();
    await register(page, 'Rotating Person', uniqueEmail('regenerate'));
    await page.goto('/settings/api-tokens');
    await page.getByLabel('Name').fill('Rotating bot');
    await page.getByRole('button', { name: 'Create token' }).click();
    const old = await page.getByLabel('New API token').inputValue();
    await page.getByRole('link', { name: 'Done' }).click();
    await page.waitForURL('**/settings/api-tokens');
    expect(await page.getByLabel('New API token').count()).toBe(0);
    expect((await api('/api/v1/user/profile', old)).status).toBe(200);

    await page.getByRole('link', { name: 'Rotating bot' }).click();
    await page.waitForURL(/\/settings\/api-tokens\/\d+$/);
    await page.getByLabel('Keep the old value working for (minutes)').fill('5');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Regenerate' }).click();
    const field = page.getByLabel('New value of the token');
    await field.waitFor();
    const value = await field.inputValue();
    expect(value).toMatch(/^tsr_[0-9A-Za-z]{36}$/);
    expect(value).not.toBe(old);
    expect(
      await page.evaluate("getComputedStyle(document.getElementById('new-token')).fontFamily"),
    ).toMatch(/monospace|Menlo|Consolas/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(value);
    await page.screenshot({ path: join(shots, 'api-token-regenerated.png'), fullPage: true });

    // Both values work during the five minutes of grace; each use is counted (3 today).
    expect((await api('/api/v1/user/profile', value)).status).toBe(200);
    expect((await api('/api/v1/user/profile', old)).status).toBe(200);
    await t.app.get(TokenUsageRecorder).flush();

    await page.getByRole('link', { name: 'Done' }).click();
    await page.waitForURL(/\/settings\/api-tokens\/\d+$/);
    expect(await page.getByLabel('New value of the token').count()).toBe(0);
    expect(await page.content()).not.toContain(value);
    const details = page.getByRole('region', { name: 'Details' });
    expect(await details.textContent()).toContain(`tsr_…${value.slice(-4)}`);
    expect(await details.locator('[data-last-use]').textContent()).toMatch(
      /from 127\.0\.0\.1 with node/,
    );
    expect(await details.locator('[data-previous-value]').textContent()).toMatch(
      /Works until .*used 1 time/s,
    );
    // The days as a chart that says what it shows, the numbers a click away.
    const chart = page.getByRole('img', { name: 'Requests per day, last 30 days' });
    expect(await chart.getAttribute('aria-labelledby')).toBe('usage-chart-title usage-chart-desc');
    expect(await page.locator('#usage-chart-desc').textContent()).toMatch(
      /^3 requests from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d; the busiest day was/,
    );
    // Its scale is the busiest day's count; its words are drawn at the page's size whatever the
    // width, beside the image and not stretched with it.
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      expect(await page.locator('[data-chart-top]').textContent()).toBe('3');
      const words = await page.locator('.usage-chart-frame span').evaluateAll((spans) =>
        spans.map((span) => {
          const box = span.getBoundingClientRect();
          return { height: Math.round(box.height), inImage: Boolean(span.closest('svg')) };
        }),
      );
      expect(words.every((w) => !w.inImage && w.height > 8 && w.height < 20)).toBe(true);
      expect(await page.locator('.usage-chart text').count()).toBe(0);
    }
    await page.setViewportSize({ width: 1100, height: 800 });
    const usage = page.getByRole('table', { name: /requests in the last 30 days/ });
    expect(await usage.isVisible()).toBe(false);
    await page.screenshot({ path: join(shots, 'api-token.png'), fullPage: true });
    expect(await accessibilityProblems(page, 'a token with its usage chart')).toEqual([]);
    await page.getByText('The numbers, day by day').click();
    expect(await usage.getByRole('row').nth(1).textContent()).toMatch(/\d{4}-\d\d-\d\d\s*3/);

    // The security log tells the story, newest first; filtered to tokens by keyboard.
    await page.goto('/settings/security-log');
    const events = page.locator('#events > li');
    // The first use from 127.0.0.1 was written with the usage, after the regeneration.
    expect(await events.first().getAttribute('data-event')).toBe('token.new_ip');
    await page.getByLabel('Show').selectOption('token');
    await page.getByRole('button', { name: 'Filter' }).press('Enter');
    await page.waitForURL('**/settings/security-log?kind=token');
    expect(
      await events.evaluateAll((items) => items.map((li) => li.getAttribute('data-event'))),
    ).toEqual(['token.new_ip', 'token.regenerated', 'token.created']);
    await page.screenshot({ path: join(shots, 'security-log.png'), fullPage: true });
  });

  it('should keep every word of the token tables whole and their actions in reach at 1280, 1100 and 390 pixels', async () => {
    const user = await createUser(t.app, {
      name: 'Narrow Screen',
      email: uniqueEmail('narrow'),
      password: 'correct horse battery',
    });
    for (const [name, expiresInDays] of [
      ['Deployment pipeline for production', 30],
      ['Nightly backup', undefined],
      ['Reporting dashboard read-only', 365],
    ] as const) {
      await createToken(t.app, user, { name, expiresInDays });
    }
    const team = await createTeam(t.app, user, 'Lovelace and Babbage Analytical Engines');
    for (const [name, email] of [
      ['Augusta Ada King-Noel Lovelace', uniqueEmail('augusta.ada.king-noel.lovelace')],
      ['Charles Babbage', uniqueEmail('charles')],
      // One run of 48 characters before the @: too long for the column, so it breaks every 16.
      ['Ada', uniqueEmail('averyveryveryverylongemailaddressthatgoesonandon.forever')],
    ]) {
      const member = await createUser(t.app, { name, email });
      await addMember(t.app, team.id, member, 'member');
      await createToken(t.app, member, { name: 'Difference engine', teamId: team.id });
    }
    const revoked = await createToken(t.app, user, { name: 'Retired laptop' });
    await t.app.get(TokensService).revoke(Actors.operator(user.id), revoked.token.id);
    // Its refusals fill the tokens' "Acts in" and the team's inventory.
    await t.app.get(TeamPoliciesService).setPolicy(Actors.operator(user.id), team.id, {
      requireTwoFactor: false,
      tokenMaxLifetimeDays: 30,
    });

    // A laptop's window a little narrower than the screen: the token table's eight columns beside
    // the settings' sections, with no room to spare.
    for (const width of [1280, 1100, 390]) {
      const page = await newPage({ width, height: 900 });
      await page.goto('/login');
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/dashboard');
      await page.goto('/settings/api-tokens');

      // Nothing wider than the screen, so nothing hides off to the side.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        width,
      );
      expect(await page.evaluate(BROKEN_WORDS)).toEqual([]);
      // Each table inside its card.
      expect(await page.evaluate(TABLES_PAST_THEIR_CARD)).toBe(0);
      await page.locator('[data-team-refusal]').first().waitFor();
      for (const button of await page.getByRole('button', { name: /^Revoke the token/ }).all()) {
        await button.scrollIntoViewIfNeeded();
        const box = (await button.boundingBox())!;
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(width);
      }
      expect(await page.getByRole('link', { name: 'Retired laptop' }).isVisible()).toBe(true);
      await page.screenshot({ path: join(shots, `api-tokens-${width}.png`), fullPage: true });
      // The members table too: names, addresses and roles whole, the role select in reach.
      await page.goto(`/teams/${team.id}`);
      expect(await page.evaluate(BROKEN_WORDS)).toEqual([]);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        width,
      );
      for (const select of await page.getByRole('combobox', { name: /^Role of/ }).all()) {
        const box = (await select.boundingBox())!;
        expect(box.x + box.width).toBeLessThanOrEqual(width);
      }
      expect(await page.evaluate(TABLES_PAST_THEIR_CARD)).toBe(0);
      // The team's inventory: people's names and addresses whole, the table inside its card.
      await page.goto(`/teams/${team.id}/tokens`);
      await page.locator('[data-team-refusal]').first().waitFor();
      expect(await page.evaluate(BROKEN_WORDS)).toEqual([]);
      expect(await page.evaluate(TABLES_PAST_THEIR_CARD)).toBe(0);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        width,
      );
      // An invitation refused: the address's error below its field moves nothing else.
      await page.goto(`/teams/${team.id}`);
      await page.getByLabel('Email address').fill('not an address');
      await page.getByRole('button', { name: 'Send invitation' }).click();
      await page.locator('#email-error').waitFor();
      const tops = await Promise.all(
        [
          page.getByLabel('Email address'),
          page.getByLabel('Role', { exact: true }),
          page.getByRole('button', { name: 'Send invitation' }),
        ].map(async (part) => Math.round((await part.boundingBox())!.y)),
      );
      // Side by side on a laptop; stacked on a phone, each below the one before.
      if (width === 1280) expect(new Set(tops).size).toBe(1);
      else expect([...tops].sort((a, b) => a - b)).toEqual(tops);
      await page.context().close();
    }
  });

  it('should send a form once when it is submitted twice before its answer, and again once shown from the history', async () => {
    const page = await newPage();
    const email = uniqueEmail('twice');
    await register(page, 'Hasty Person', email);
    await page.goto('/settings/api-tokens');
    await page.getByLabel('Name').fill('Pressed twice');
    // Enter pressed twice, or a double click: the second submission comes while the first is on
    // its way. A submit event the page lets through is sent; one it cancels is not.
    const sent = () =>
      page.evaluate(() => {
        const form = document.querySelector('form[action="/settings/api-tokens"]')!;
        const submit = new SubmitEvent('submit', { bubbles: true, cancelable: true });
        form.dispatchEvent(submit);
        return !submit.defaultPrevented;
      });
    expect([await sent(), await sent()]).toEqual([true, false]);
    expect(
      await page.locator('form[action="/settings/api-tokens"]').getAttribute('aria-busy'),
    ).toBe('true');
    // The page shown again from the browser's history sends it again.
    await page.evaluate(() =>
      window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true })),
    );
    expect([await sent(), await sent()]).toEqual([true, false]);

    await page.evaluate(() =>
      window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true })),
    );
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByLabel('New API token').waitFor();
    const user = await t.dataSource.getRepository(User).findOneByOrFail({ email });
    expect(
      await t.dataSource
        .getRepository(PersonalAccessToken)
        .countBy({ userId: user.id, name: 'Pressed twice' }),
    ).toBe(1);
  });

  it('should keep team pages, and their tables, within a phone or a laptop screen when a name or an address is longer than its line', async () => {
    const long = (tag: string) => `${tag}${randomBytes(4).toString('hex')}${'x'.repeat(52)}`;
    const owner = await createUser(t.app, {
      name: 'Wide Owner',
      email: `${long('owner')}@example.com`,
      password: 'correct horse battery',
    });
    const team = await createTeam(t.app, owner, `Team${'W'.repeat(96)}`);
    const member = await createUser(t.app, {
      name: 'M'.repeat(100),
      email: `${long('m')}@example.com`,
    });
    await addMember(t.app, team.id, member, 'member');
    await createToken(t.app, member, { name: 'T'.repeat(100), teamId: team.id });
    await t.app.get(InvitationsService).invite(Actors.operator(owner.id), team.id, {
      email: `${long('i')}@example.com`,
      role: 'member',
    });

    const page = await newPage({ width: 390, height: 900 });
    await page.goto('/login');
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
    const wider: Record<string, number> = {};
    for (const screen of [390, 1280]) {
      await page.setViewportSize({ width: screen, height: 900 });
      for (const path of ['/teams', `/teams/${team.id}`, `/teams/${team.id}/tokens`]) {
        await page.goto(path);
        const width = Number(await page.evaluate('document.documentElement.scrollWidth'));
        if (width > screen) wider[`${path} at ${screen}`] = width;
        // No table scrolls within its card either, its last columns out of sight.
        const tables = await page.evaluate(() =>
          [...document.querySelectorAll('.table-wrap')].map((e) => e.scrollWidth - e.clientWidth),
        );
        tables.forEach((over, i) => {
          if (over > 0) wider[`${path} at ${screen}, table ${i + 1}`] = over;
        });
      }
    }
    expect(wider).toEqual({});
  });

  it('should keep a token when the person cancels the revocation', async () => {
    const page = await newPage();
    await register(page, 'Careful Person', uniqueEmail('cancel'));
    await page.goto('/settings/api-tokens');
    await page.getByLabel('Name').fill('Keep me');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.getByLabel('New API token').inputValue();

    page.once('dialog', (dialog) => void dialog.dismiss());
    await page
      .getByRole('row', { name: /Keep me/ })
      .getByRole('button', { name: 'Revoke' })
      .click();
    expect((await api('/api/v1/user/profile', token)).status).toBe(200);
  });

  it('should let a person who forgot their password choose a new one from the mailed link', async () => {
    const email = uniqueEmail('forgot');
    await createUser(t.app, { name: 'Forgetful', email, password: 'the old password' });
    const page = await newPage();
    await page.goto('/login');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByText('If an account uses that address').waitFor();

    const mail = await t.mail.waitFor({ to: email, subject: 'Reset your Tessera password' });
    await page.goto(TestSmtpServer.linkPath(mail, '/reset-password/'));
    await page.getByLabel('New password', { exact: true }).fill('a new password');
    await page.getByLabel('Confirm new password').fill('a new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForURL('**/login');
    await page.getByText('Your password has been changed').waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a new password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
  });

  it('should switch the team the API answers with when the person switches teams', async () => {
    const page = await newPage();
    await register(page, 'Grace Hopper', uniqueEmail('teams'));
    await page.goto('/settings/api-tokens');
    await page.getByLabel('Name').fill('Team reader');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.getByLabel('New API token').inputValue();
    expect((await api('/api/v1/team', token)).body.data.name).toBe("Grace's Team");

    await page.getByRole('link', { name: 'Teams' }).first().click();
    await page.getByLabel('Team name').fill('Compiler Team');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page
      .getByText('Team "Compiler Team" was created and is now your current team.')
      .waitFor();
    await page.getByRole('heading', { name: 'Compiler Team', level: 1 }).waitFor();
    await page.getByLabel('Email address').waitFor();
    await page.goto('/teams');
    await page.screenshot({ path: join(shots, 'teams.png'), fullPage: true });
    expect((await api('/api/v1/team', token)).body.data).toMatchObject({
      name: 'Compiler Team',
      slug: 'compiler-team',
    });

    await page
      .getByRole('listitem')
      .filter({ hasText: "Grace's Team" })
      .getByRole('button', { name: 'Switch to this team' })
      .click();
    await page.getByText(`You now work in "Grace's Team".`).waitFor();
    expect((await api('/api/v1/team', token)).body.data.name).toBe("Grace's Team");

    await page.getByRole('link', { name: 'Compiler Team' }).click();
    await page.screenshot({ path: join(shots, 'team.png'), fullPage: true });
    expect(await page.getByRole('heading', { name: 'Compiler Team' }).isVisible()).toBe(true);
  });

  it('should turn on two-factor sign-in from a scanned secret, then ask for a code at sign-in', async () => {
    const page = await newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    const email = uniqueEmail('otp');
    await register(page, 'Katherine Johnson', email);
    const axe: string[] = [];
    const check = async (name: string) => axe.push(...(await accessibilityProblems(page, name)));
    await openAccountMenu(page);
    await page.getByRole('link', { name: 'Security', exact: true }).click();
    await page.waitForURL('**/settings/security');
    await check('security, two-factor off');
    await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    expect((await qr.boundingBox())!.width).toBeGreaterThan(150);
    const secret = (await page.locator('#totp-secret').textContent())!.trim();
    await page.screenshot({ path: join(shots, 'two-factor-setup.png'), fullPage: true });
    await check('two-factor setup');

    await page.getByLabel('Code', { exact: true }).fill('000000');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText('That code is not right.').waitFor();
    await check('two-factor setup, a wrong code');
    expect((await page.locator('#totp-secret').textContent())!.trim()).toBe(secret);
    await page.getByLabel('Code', { exact: true }).fill(totpCodeAt(t, secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText('Two-factor sign-in is on.').waitFor();
    const codes = await page.locator('#recovery-codes li').allTextContents();
    expect(codes).toHaveLength(10);
    await page.screenshot({ path: join(shots, 'two-factor-recovery-codes.png'), fullPage: true });
    await check('recovery codes');
    // Saved as a text file, copied one to a line, or printed with nothing else of the page.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('tessera-recovery-codes.txt');
    const file = await readFile((await download.path())!, 'utf8');
    expect(file.split('\n')[0]).toBe(`Tessera recovery codes for ${email}`);
    for (const code of codes) expect(file).toContain(`\n${code.trim()}\n`);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      `${codes.map((code) => code.trim()).join('\n')}\n`,
    );
    await page.evaluate(() => {
      (window as unknown as { printed: number }).printed = 0;
      window.print = () => void (window as unknown as { printed: number }).printed++;
    });
    await page.getByRole('button', { name: 'Print' }).click();
    expect(await page.evaluate(() => (window as unknown as { printed: number }).printed)).toBe(1);
    await page.emulateMedia({ media: 'print' });
    expect(await page.locator('.site-header').isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Print' }).isVisible()).toBe(false);
    expect(await page.locator('#recovery-codes').isVisible()).toBe(true);
    await page.emulateMedia({ media: 'screen' });
    // A reload asks for the security page, not for the codes again.
    await page.reload();
    await page.waitForURL('**/settings/security');
    expect(await page.content()).not.toContain(codes[0].trim());
    await page.getByText('10 recovery codes left.').waitFor();
    await page.screenshot({ path: join(shots, 'security.png'), fullPage: true });
    await check('security, two-factor on');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/two-factor-challenge');
    await page.screenshot({ path: join(shots, 'two-factor-challenge.png') });
    await check('two-factor challenge');
    const next = totpCodeAt(t, secret, 1);
    await page.getByLabel('Code', { exact: true }).fill(next);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL('**/dashboard');
    await page.goto('/confirm-password');
    await check('password confirmation');
    expect(problems).toEqual([]);
    expect(axe).toEqual([]);
  });

  it('should send HTML mails whose call to action is a button with its link below, inside the card on any screen', async () => {
    const email = uniqueEmail('mail-layout');
    const visitor = await newPage();
    await visitor.goto('/forgot-password');
    await createUser(t.app, { name: 'Mail Reader', email, password: PASSWORD });
    await visitor.getByLabel('Email').fill(email);
    await visitor.getByRole('button', { name: 'Send the link' }).click();
    const mail = await t.mail.waitFor({ to: email, subject: 'Reset your Tessera password' });
    const page = await newPage();
    await page.setContent(mail.html);
    const problems: string[] = [];
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      const layout = await page.evaluate(() => {
        const card = document.querySelector('body > div')!.getBoundingClientRect();
        const links = [...document.querySelectorAll('a')].map((a) => a.getBoundingClientRect());
        return {
          wide: document.documentElement.scrollWidth,
          outside: links.filter((r) => r.right > card.right + 0.5).length,
        };
      });
      if (layout.wide > width) problems.push(`${width} px: ${layout.wide} px wide`);
      if (layout.outside > 0) problems.push(`${width} px: ${layout.outside} links past the card`);
    }
    const button = page.getByRole('link', { name: 'Choose a new password' });
    expect(await button.evaluate((a) => getComputedStyle(a).display)).toBe('inline-block');
    const link = TestSmtpServer.linkPath(mail, '/reset-password/');
    expect(await page.getByRole('link', { name: new RegExp(`${link}$`) }).count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it('should report what axe finds wrong with a page at both widths in light and dark, and leave out only the rules excepted', async () => {
    const page = await newPage();
    await page.setContent(
      '<!doctype html><html lang="en"><head><title>Broken</title></head><body><main>' +
        '<h1>Broken</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><input>' +
        '<p id="pale" style="color: #fff; background: #fff">White on white</p></main></body></html>',
    );
    expect((await axeProblems(page, 'broken')).sort()).toEqual([
      'broken at 1280 px, dark: color-contrast needs review at #pale',
      'broken at 1280 px, dark: image-alt (critical) at img',
      'broken at 1280 px, dark: label (critical) at input',
      'broken at 1280 px: color-contrast needs review at #pale',
      'broken at 1280 px: image-alt (critical) at img',
      'broken at 1280 px: label (critical) at input',
      'broken at 390 px, dark: color-contrast needs review at #pale',
      'broken at 390 px, dark: image-alt (critical) at img',
      'broken at 390 px, dark: label (critical) at input',
      'broken at 390 px: color-contrast needs review at #pale',
      'broken at 390 px: image-alt (critical) at img',
      'broken at 390 px: label (critical) at input',
    ]);
    // A page that changes is checked as it is now, with axe put into it once.
    await page.evaluate(() => {
      document.querySelector('img')!.setAttribute('alt', 'A dot');
      document.querySelector<HTMLElement>('#pale')!.style.color = '#1f2328';
    });
    expect(await axeProblems(page, 'fixed', { exceptRules: ['label'] })).toEqual([]);
  });

  it('should show what is wrong next to the field and keep what was typed', async () => {
    const page = await newPage();
    await page.goto('/register');
    await page.getByLabel('Name').fill('Alan Turing');
    await page.getByLabel('Email').fill('alan@');
    await page.getByLabel('Password', { exact: true }).fill('short');
    await page.getByLabel('Confirm password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Enter a valid email address.').waitFor();
    expect(await page.getByLabel('Name').inputValue()).toBe('Alan Turing');
    expect(await page.getByLabel('Email').inputValue()).toBe('alan@');
    expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
    expect(await page.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');
    // The first wrong field has the focus, its message read with it.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('email');
  });

  it('should bring a mistake low on a long page into view, its field focused, on a phone', async () => {
    const page = await newPage({ width: 390, height: 800 });
    await register(page, 'Long Page Person', uniqueEmail('long-page'));
    await page.goto('/settings/profile');
    const field = page.getByLabel('Your password');
    await field.fill('not my password');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await page.waitForURL('**/settings/profile');
    await page.locator('#password-error').waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('delete-password');
    const box = (await field.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(800);
    expect(await field.getAttribute('aria-describedby')).toBe('password-error');
  });

  it('should focus a group of choices sent with none chosen, each choice read with its message, on a phone', async () => {
    const page = await newPage({ width: 390, height: 800 });
    await register(page, 'No Ability Person', uniqueEmail('no-ability'));
    await page.goto('/settings/api-tokens');
    await page.locator('#token-name').fill('Chose nothing');
    for (const box of await page.locator('input[name="abilities"]').all()) {
      await box.setChecked(false);
    }
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.locator('#abilities-error').waitFor();
    const focused = await page.evaluate(() => {
      const e = document.activeElement!;
      return [
        e.getAttribute('name'),
        e.getAttribute('aria-invalid'),
        e.getAttribute('aria-describedby'),
      ];
    });
    expect(focused.slice(0, 2)).toEqual(['abilities', 'true']);
    expect(focused[2]!.split(' ')).toContain('abilities-error');
    const choices = page.locator('input[name="abilities"]');
    for (const choice of await choices.all()) {
      expect(await choice.getAttribute('aria-describedby')).toMatch(/\babilities-error\b/);
    }
    const box = (await choices.first().boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(800);
    expect(await axeProblems(page, 'no ability chosen')).toEqual([]);
  });

  it('should let a developer try the API from the docs page, with nothing loaded from elsewhere', async () => {
    const user = await createUser(t.app, { name: 'Grace Hopper', email: uniqueEmail('docs') });
    const { plaintext } = await createToken(t.app, user);
    const page = await newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith('data:')) problems.push(r.url());
    });

    await page.goto('/api/docs');
    await page.locator('.opblock-summary').first().waitFor();
    const axe = await accessibilityProblems(page, 'API docs');
    await page.setViewportSize({ width: 1100, height: 800 });
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    await page.getByLabel('auth-bearer-value').fill(plaintext);
    await page.getByRole('button', { name: 'Apply credentials' }).click();
    await page.locator('.modal-ux button.btn-done').click();
    await page.locator('.opblock-summary-get', { hasText: '/api/v1/user/profile' }).click();
    await page.getByRole('button', { name: 'Try it out' }).click();
    await page.getByRole('button', { name: 'Execute' }).click();
    const body = page
      .locator('.responses-wrapper .live-responses-table .response-col_description pre')
      .first();
    await body.waitFor();
    await page.screenshot({ path: join(shots, 'api-docs.png'), fullPage: true });

    expect(await body.textContent()).toContain('Grace Hopper');
    expect(problems).toEqual([]);
    // An operation open, with its answer, still fits a phone's width.
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await page.setViewportSize({ width: 1100, height: 800 });
    axe.push(...(await accessibilityProblems(page, 'API docs, an answer shown')));
    expect(axe).toEqual([]);
  });
});
