// axeProblems hands a function to the page, which runs it with the DOM.
/// <reference lib="dom" />
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import axe from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
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

/**
 * A page in a context of its own (its own cookies), on `baseURL`: an error a page's script throws
 * fails the test, and with `acceptDialogs` the browser's own confirmation dialogs are accepted
 * (the pages confirm destructive actions with them).
 */
export async function openPage(
  browser: Browser,
  baseURL: string,
  {
    viewport = { width: 1280, height: 900 },
    acceptDialogs = false,
    prepare,
  }: {
    viewport?: { width: number; height: number };
    acceptDialogs?: boolean;
    /** Runs on the context before the page opens (permissions, a virtual authenticator). */
    prepare?: (context: BrowserContext) => Promise<void>;
  } = {},
): Promise<Page> {
  const context = await browser.newContext({ baseURL, viewport });
  await prepare?.(context);
  const page = await context.newPage();
  page.on('pageerror', (error) => {
    throw error;
  });
  if (acceptDialogs) page.on('dialog', (dialog) => void dialog.accept());
  return page;
}

/** A phone held upright and a laptop: every page must work at both. */
export const PAGE_WIDTHS = [390, 1280];

/** The system's light and dark appearance (`prefers-color-scheme`): the pages follow either. */
export const COLOR_SCHEMES = ['light', 'dark'] as const;

/**
 * What axe finds wrong with the page as it is now, at each of PAGE_WIDTHS in each of
 * COLOR_SCHEMES (every rule but
 * `exceptRules`); nothing is what passes. axe-core is put into the page once per document and
 * run at each width (through @axe-core/playwright, the 550 KB script was evaluated twice per run,
 * most of the time a check took). Only violations and results that need review are gathered in
 * full (axe's `resultTypes`): the rules run the same, and the passing nodes, which nobody reads
 * here, are not collected. Of those that need review, `color-contrast` counts as a problem: axe
 * cannot judge text as light as its background (1:1), among others, and leaves it to a person,
 * who would find it unreadable; only text where an open menu overlaps the page is left out. The pages have no frames. The page is left at
 * its size.
 */
export async function axeProblems(
  page: Page,
  name: string,
  { exceptRules = [], height = 900 }: { exceptRules?: string[]; height?: number } = {},
): Promise<string[]> {
  const problems: string[] = [];
  const size = page.viewportSize();
  if (!(await page.evaluate('typeof window.axe?.run === "function"'))) {
    await page.evaluate(axe.source);
  }
  const options: axe.RunOptions = {
    resultTypes: ['violations', 'incomplete'],
    rules: Object.fromEntries(exceptRules.map((rule) => [rule, { enabled: false }])),
  };
  for (const [width, scheme] of PAGE_WIDTHS.flatMap((w) =>
    COLOR_SCHEMES.map((s) => [w, s] as const),
  )) {
    await page.setViewportSize({ width, height });
    await page.emulateMedia({ colorScheme: scheme });
    const at = scheme === 'light' ? `${width} px` : `${width} px, dark`;
    const { violations, incomplete } = await page.evaluate(
      // Runs in the page, where axe-core was put.
      async (runOptions) =>
        await (window as unknown as { axe: typeof axe }).axe.run(document, runOptions),
      options,
    );
    for (const v of violations) {
      const where = v.nodes.map((node) => node.target.join(' ')).join(', ');
      problems.push(`${name} at ${at}: ${v.id} (${v.impact}) at ${where}`);
    }
    for (const v of incomplete.filter((result) => result.id === 'color-contrast')) {
      const unread = v.nodes.filter((node) => !node.any.some(coveredByAnotherElement));
      const where = unread.map((node) => node.target.join(' ')).join(', ');
      if (where) problems.push(`${name} at ${at}: ${v.id} needs review at ${where}`);
    }
  }
  if (size) await page.setViewportSize(size);
  await page.emulateMedia({ colorScheme: 'light' });
  return problems;
}

/**
 * Where an open menu lies over the page: the text under it (nobody reads it there), and the
 * menu's own text where it crosses from the header into the page, whose background axe cannot
 * tell (the menu's is opaque).
 */
const OVERLAP = new Set(['bgOverlap', 'elmPartiallyObscuring']);
const coveredByAnotherElement = (check: axe.CheckResult): boolean =>
  OVERLAP.has((check.data as { messageKey?: string } | null)?.messageKey ?? '');

/**
 * What axe finds wrong with the page (`axeProblems`), and whether anything is wider than the
 * screen, at each of PAGE_WIDTHS; nothing is what passes. The page is left at 1280 px.
 */
export async function pageProblems(page: Page, name: string): Promise<string[]> {
  const problems = await axeProblems(page, name);
  for (const width of PAGE_WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    if (scrollWidth > width) problems.push(`${name} at ${width} px: ${scrollWidth} px wide`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  return problems;
}

/**
 * How many lines the text of the element takes, as drawn now (the distinct tops of its text's
 * boxes): 1 for a button whose label no line break cuts.
 */
export async function linesOfText(page: Page, selector: string): Promise<number> {
  return page
    .locator(selector)
    .first()
    .evaluate((element) => {
      const range = document.createRange();
      range.selectNodeContents(element);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    });
}
