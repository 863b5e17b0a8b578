import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { track } from './leftovers.js';
import { ROOT } from './run-built.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Debian's Chromium, headless, with every connection outside this machine refused: the pages
 * must work with nothing but what the app serves.
 */
export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
    ],
  });
  const forget = track(() => browser.close());
  browser.on('disconnected', forget);
  return browser;
}

/**
 * Where screenshots go: docs/screenshots when UPDATE_SCREENSHOTS=1 (the README's pictures),
 * otherwise test/artifacts, which git ignores.
 */
export function screenshotDir(): string {
  const dir =
    process.env.UPDATE_SCREENSHOTS === '1'
      ? join(ROOT, 'docs', 'screenshots')
      : join(ROOT, 'test', 'artifacts', 'screenshots');
  mkdirSync(dir, { recursive: true });
  return dir;
}
