import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ManualClock } from '../src/clock/clock.js';
import { createUser, uniqueEmail } from './factories/index.js';
import {
  launchBrowser,
  linesOfText,
  openPage,
  pageProblems,
  screenshotDir,
} from './support/browser.js';
import { PASSWORD } from './support/people.js';
import { forgetPasswordConfirmation } from './support/sessions.js';
import { turnOnTwoFactor } from './support/two-factor.js';
import { createTestApp, freePort, type TestApp } from './support/test-app.js';
import { WebClient } from './support/web-client.js';

/**
 * Passkeys in Chromium, with the DevTools protocol's virtual authenticator (resident keys, user
 * verification on): add one, sign out, sign in with it without typing anything (no password,
 * no code though two-factor sign-in is on), confirm a
 * sensitive action with it, remove it, and see it refused. Every page passes axe at 390 and
 * 1280 px.
 */
describe('passkeys in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const clock = new ManualClock();

  beforeAll(async () => {
    // Passkeys belong to a host name (an IP address cannot be a relying party's id): the
    // browser uses `localhost`, which is APP_URL too.
    const port = await freePort();
    base = `http://localhost:${port}`;
    t = await createTestApp(
      { RATE_LIMIT_ENABLED: 'false', PORT: String(port), APP_URL: base },
      { clock },
    );
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A page with a platform authenticator that holds passkeys and verifies its user. */
  async function pageWithAuthenticator(): Promise<Page> {
    const page = await openPage(browser, base, { acceptDialogs: true });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    return page;
  }

  it('should add a passkey, sign in and confirm with it, remove it, and refuse it then', async () => {
    const email = uniqueEmail('passkey');
    const user = await createUser(t.app, { name: 'Penny Passkey', email, password: PASSWORD });
    const page = await pageWithAuthenticator();
    const problems: string[] = [];

    await page.goto('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');

    await page.goto('/settings/security');
    // Sent with no name, the name is marked, focused and read with the message.
    const newName = page.getByLabel('Name of the new passkey');
    await newName.fill('  ');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('Give the passkey a name first.');
    expect(await newName.getAttribute('aria-invalid')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('passkey-name');
    const describedBy = (await newName.getAttribute('aria-describedby'))!.split(' ');
    expect(describedBy).toEqual(['passkey-name-hint', 'passkey-name-script-error']);
    problems.push(...(await pageProblems(page, 'security page, a passkey with no name')));
    await newName.fill('Chromium');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await expect(page.getByRole('status').first().textContent()).resolves.toContain(
      'Passkey "Chromium" added',
    );
    await expect(page.locator('[data-passkey-id]').first().textContent()).resolves.toContain(
      'Chromium',
    );
    problems.push(...(await pageProblems(page, 'security page with a passkey')));
    await page.screenshot({ path: join(screenshotDir(), 'passkeys.png'), fullPage: true });

    // On a phone, Rename keeps its word whole beside the name.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await linesOfText(page, '[data-passkey-id] .row-form button')).toBe(1);
    await page.setViewportSize({ width: 1280, height: 900 });

    // A rename refused: its error under the passkey renamed, with what was typed, and none at
    // the form that adds a passkey.
    const renamed = page.getByLabel('New name for the passkey Chromium');
    await renamed.fill('   ');
    await page.getByRole('button', { name: 'Rename the passkey Chromium' }).click();
    const listed = page.locator('[data-passkey-id]').first();
    await listed.locator('.field-error').waitFor();
    expect(await listed.locator('.field-error').textContent()).toBe('Give the passkey a name.');
    expect(await renamed.inputValue()).toBe('   ');
    expect(await renamed.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#name-error').count()).toBe(0);
    expect(
      await page.getByLabel('Name of the new passkey').getAttribute('aria-invalid'),
    ).toBeNull();
    problems.push(...(await pageProblems(page, 'security page, a rename refused')));
    await renamed.fill('Chromium');
    await page.getByRole('button', { name: 'Rename the passkey Chromium' }).click();
    await expect(page.getByRole('status').first().textContent()).resolves.toContain(
      'The passkey is now called "Chromium".',
    );

    // Signed in elsewhere too: signing the others out offers to remove the passkey as well.
    expect((await new WebClient(t.server).login(email, PASSWORD)).headers.location).toBe(
      '/dashboard',
    );
    await page.goto('/settings/sessions');
    await page.getByLabel('Remove my passkeys too (1)').waitFor();
    problems.push(...(await pageProblems(page, 'sessions page offering to remove passkeys')));
    await page.goto('/settings/security');

    // Two-factor sign-in on as well: the passkey is both factors, so no code is asked.
    await turnOnTwoFactor(t, { user, email });
    // Signed out, then in again with nothing typed.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/login?signed_out=1');
    problems.push(...(await pageProblems(page, 'sign-in page with its passkey button')));
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL('**/dashboard');
    expect(page.url()).not.toContain('two-factor-challenge');

    // A sensitive action confirmed with the passkey: removing it.
    forgetPasswordConfirmation(clock);
    await page.goto('/settings/security');
    await page.getByRole('button', { name: 'Remove the passkey Chromium' }).click();
    await page.waitForURL('**/confirm-password?**');
    problems.push(...(await pageProblems(page, 'password confirmation with a passkey')));
    await page.getByRole('button', { name: 'Confirm with a passkey' }).click();
    await page.waitForURL('**/settings/security');
    await expect(page.getByRole('status').first().textContent()).resolves.toContain(
      'Passkey "Chromium" removed',
    );
    expect(await page.locator('[data-passkey-id]').count()).toBe(0);

    // The authenticator still holds it; Tessera no longer takes it.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/login?signed_out=1');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL('**/login');
    await expect(page.locator('#credential-error').textContent()).resolves.toContain(
      'That passkey could not be verified.',
    );
    expect(page.url()).not.toContain('dashboard');

    expect(problems).toEqual([]);
  });
});
