/**
 * `npm run screenshots`: photographs the console's pages (`screenshot-console.ts`:
 * fixed clock, fixed ids, seeded tasks) at a desktop's and a 390-px phone's
 * width into `docs/console-<page>-<desktop|phone>.png`, and writes each
 * page's text to `test/browser/screenshots.snapshot.json`, which the browser
 * lane compares with the pages as they render now.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { launchBrowser } from './browser.ts';
import { NOW, PAGES, startScreenshotConsole } from './screenshot-console.ts';

export const SNAPSHOT = fileURLToPath(new URL('./screenshots.snapshot.json', import.meta.url));
const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));
export const SIZES = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

/** Renders every page on a fixed clock in UTC; `each` gets the page once it has settled, per page and size. */
export async function renderPages(each: (name: string, size: keyof typeof SIZES, page: Page) => Promise<void>): Promise<void> {
  const console_ = await startScreenshotConsole();
  const browser = await launchBrowser({ timezoneId: 'UTC' });
  try {
    const page = await browser.page();
    await page.clock.setFixedTime(NOW);
    await page.goto(`${console_.base}/console`); // signs in (the stand-in sign-in)
    for (const [name, path] of Object.entries(PAGES)) {
      for (const size of Object.keys(SIZES) as Array<keyof typeof SIZES>) {
        await page.setViewportSize(SIZES[size]);
        await page.goto(`${console_.base}${path}`);
        await each(name, size, page);
      }
    }
  } finally {
    await browser.close();
    await console_.close();
  }
}

/** A page's text as the snapshot keeps it: what a person reads, lines trimmed. */
export async function pageText(page: Page): Promise<string> {
  const text = await page.locator('body').innerText();
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const texts: Record<string, string> = {};
  await renderPages(async (name, size, page) => {
    await page.screenshot({ path: `${DOCS}console-${name}-${size}.png`, fullPage: true });
    if (size === 'desktop') texts[name] = await pageText(page);
  });
  writeFileSync(SNAPSHOT, `${JSON.stringify(texts, null, 2)}\n`);
  console.log(`Wrote ${Object.keys(PAGES).length * 2} pictures to docs/ and their text to ${SNAPSHOT}`);
}
