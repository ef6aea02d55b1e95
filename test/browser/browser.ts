/**
 * The browser lane's browser: Debian's Chromium, headless, driven by
 * playwright-core, each launch in a fresh user-data directory (removed on
 * close), every dialog recorded (and dismissed) so a test can assert that no
 * script of a task's ever ran, and every console message kept (a CSP
 * violation shows there).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Where Debian installs Chromium (`apt-get install chromium`; `.ci/run` does it when missing). */
export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface TestBrowser {
  context: BrowserContext;
  /** A new tab. */
  page(): Promise<Page>;
  /** The message of every dialog (`alert`, `confirm`, `prompt`) any page opened. */
  dialogs: string[];
  /** Every console message of every page. */
  consoleMessages: string[];
  close(): Promise<void>;
}

/** How a browser's pages are set up: see Playwright's context options of the same names. */
export interface BrowserOptions {
  /** Lets a test inject a script (axe-core) into pages whose CSP would refuse it; the served header is unchanged. */
  bypassCSP?: boolean;
  viewport?: { width: number; height: number };
  timezoneId?: string;
}

/** A fresh browser (its own profile: no cookies, no cache). */
export async function launchBrowser(options: BrowserOptions = {}): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'mcp-tasks-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, headless: true, ...options });
  const dialogs: string[] = [];
  const consoleMessages: string[] = [];
  const watch = (page: Page) => {
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('console', (message) => consoleMessages.push(`${message.type()}: ${message.text()}`));
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  return {
    context,
    page: () => context.newPage(),
    dialogs,
    consoleMessages,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Signs `login` in on the local authorization server's pages the console
 * sent `page` to (any password), with its consent page the first time this
 * person uses the console's client.
 */
export async function signInOnAuthPages(page: Page, login: string): Promise<void> {
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
  const consent = page.locator('button[type="submit"]', { hasText: 'Continue' });
  if (await consent.isVisible({ timeout: 5_000 }).catch(() => false)) await consent.click();
}
