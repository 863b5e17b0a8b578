import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { createTeam, createUser, uniqueEmail } from './factories/index.js';
import { launchBrowser, openPage, pageProblems } from './support/browser.js';
import { PASSWORD } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { AuditStreamReceiver } from './support/audit-stream-receiver.js';

/**
 * A team's owner adds a webhook endpoint in Chromium, copies its secret shown once, sends a
 * test event and sees it in the delivery log, rotates its secret (the new one shown once), then
 * deletes the endpoint; adds an audit stream with an Authorization header, and sees its batches
 * in its delivery log. Every page passes axe at 390 and 1280 px and fits a phone's width.
 */
describe("a team's webhooks, in a real browser", () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let receiver: WebhookReceiver;
  let collector: AuditStreamReceiver;

  beforeAll(async () => {
    t = await createTestApp({
      RATE_LIMIT_ENABLED: 'false',
      WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
    });
    base = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
    browser = await launchBrowser();
    receiver = await new WebhookReceiver().start();
    collector = await new AuditStreamReceiver().start();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await receiver?.stop();
    await collector?.stop();
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

  it('should add an endpoint with its secret shown once, send a test event, show the log, rotate its secret and delete it', async () => {
    const email = uniqueEmail('owner');
    const owner = await createUser(t.app, { name: 'Olga Owner', email, password: PASSWORD });
    const team = await createTeam(t.app, owner, 'Harbour');
    const page = await signedInPage(email);
    const problems: string[] = [];

    await page.goto(`/teams/${team.id}`);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(`**/teams/${team.id}/webhooks`);
    problems.push(...(await pageProblems(page, 'webhooks, none yet')));
    // The URL fields are drawn as every other text field: full width, the page's type size.
    const drawn = (selector: string) =>
      page
        .locator(selector)
        .evaluate((input) => [
          getComputedStyle(input).fontSize,
          input.getBoundingClientRect().height,
        ]);
    expect(await drawn('#webhook-url')).toEqual(await drawn('#stream-authorization'));
    expect(await drawn('#stream-url')).toEqual(await drawn('#stream-authorization'));
    // An event's description reads its names as code, not as backticks.
    const revoked = page.locator('.check-row', { hasText: 'token.revoked' }).locator('.hint');
    expect(await revoked.innerText()).not.toContain('`');
    expect(await revoked.locator('code').allInnerTexts()).toEqual([
      'reason',
      'person',
      'team_admin',
      'leak_report',
      'expiry',
    ]);

    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('member.joined').check();
    await page.getByLabel('member.removed').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('[data-shown-once]').waitFor();
    const secret = await page.getByLabel('Signing secret of the new endpoint').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    receiver.secrets.push(secret);
    problems.push(...(await pageProblems(page, 'a new endpoint, its secret shown once')));

    await page.goto(`/teams/${team.id}/webhooks`);
    expect(await page.locator('[data-shown-once]').count()).toBe(0);
    await page.getByRole('link', { name: receiver.url }).click();
    await page.waitForURL(/\/webhooks\/\d+$/);
    const endpointPage = page.url();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.waitForURL(endpointPage);
    const got = await waitFor(() => receiver.received.find((r) => r.type === 'webhook.test'));
    await waitFor(async () => {
      await page.reload();
      return (await page.locator('tr[data-status="delivered"]').count()) === 1;
    });
    await expect(page.locator('[data-webhook-deliveries]').textContent()).resolves.toContain(
      got.id,
    );
    problems.push(...(await pageProblems(page, 'an endpoint with its delivery log')));

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.locator('[data-shown-once]').waitFor();
    const rotated = await page.getByLabel('New signing secret of the endpoint').inputValue();
    expect(rotated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated).not.toBe(secret);
    problems.push(...(await pageProblems(page, 'a rotated secret, shown once')));
    await page.getByRole('link', { name: 'Done' }).click();
    await page.waitForURL(endpointPage);
    expect(await page.locator('[data-shown-once]').count()).toBe(0);
    await expect(page.locator('[data-previous-secret]').textContent()).resolves.toContain(
      'with the one it replaced',
    );

    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.waitForURL(`**/teams/${team.id}/webhooks`);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('was deleted');
    problems.push(...(await pageProblems(page, 'webhooks after a deletion')));
    expect(problems).toEqual([]);
  });

  it('should add an audit stream with an Authorization header, its secret shown once, and show its delivery log', async () => {
    const email = uniqueEmail('owner');
    const owner = await createUser(t.app, { name: 'Sam Streamer', email, password: PASSWORD });
    const team = await createTeam(t.app, owner, 'Ledger');
    const page = await signedInPage(email);
    const problems: string[] = [];

    await page.goto(`/teams/${team.id}/webhooks`);
    await page.getByLabel('Collector address').fill('http://10.0.0.5/collector');
    await page.getByRole('button', { name: 'Add audit stream' }).click();
    await expect(page.locator('#url-error').textContent()).resolves.toMatch(/address/);
    expect(await page.locator('#webhook-url').getAttribute('aria-invalid')).toBeNull();
    problems.push(...(await pageProblems(page, 'an audit stream refused')));

    await page.getByLabel('Collector address').fill(collector.url);
    await page.getByLabel('Authorization header (optional)').fill('Splunk 5f0c-hec-token');
    await page.getByRole('button', { name: 'Add audit stream' }).click();
    await page.locator('[data-shown-once]').waitFor();
    const secret = await page.getByLabel('Signing secret of the new audit stream').inputValue();
    expect(secret).toMatch(/^whsec_/);
    collector.secrets.push(secret);
    expect(await page.content()).not.toContain('5f0c-hec-token');
    problems.push(...(await pageProblems(page, 'a new audit stream, its secret shown once')));

    // Its first entry is its own creation, in the team's audit log.
    const batch = await waitFor(() => collector.batches[0]);
    expect(batch.lines.map((l) => l.event)).toEqual(['webhook.created']);
    expect(batch.headers.authorization).toBe('Splunk 5f0c-hec-token');

    await page.goto(`/teams/${team.id}/webhooks`);
    await expect(page.locator('[data-webhook-endpoints]').textContent()).resolves.toContain(
      'audit stream',
    );
    await page.getByRole('link', { name: collector.url }).click();
    await page.waitForURL(/\/webhooks\/\d+$/);
    expect(await page.getByRole('button', { name: 'Send test event' }).count()).toBe(0);
    await waitFor(async () => {
      await page.reload();
      return (await page.locator('tr[data-status="delivered"]').count()) >= 1;
    });
    await expect(page.locator('[data-webhook-deliveries]').textContent()).resolves.toContain(
      batch.id,
    );
    problems.push(...(await pageProblems(page, 'an audit stream with its delivery log')));
    expect(problems).toEqual([]);
  });
});
