/**
 * The task page's timeline in headless Chromium, on the pictures' console
 * (`screenshot-console.ts`: fixed clock, seeded tasks): at a phone's 390 px
 * the picture fits the screen, its words are drawn at a readable size, the
 * page passes axe-core under its strict CSP, and the list says the same
 * phases; on a running task's page the page's script redraws the picture
 * from the live route, in the SVG namespace.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, type TestBrowser } from './browser.ts';
import { NOW, PAGES, startScreenshotConsole } from './screenshot-console.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PHONE = { width: 390, height: 844 };
/** The seeded task still running (`screenshot-console.ts`). */
const RUNNING = '/console/tasks/00000000-0000-4000-8000-000000000005';

describe("the task page's timeline in a browser", () => {
  let console_: Awaited<ReturnType<typeof startScreenshotConsole>>;
  let browser: TestBrowser;

  before(async () => {
    console_ = await startScreenshotConsole();
    browser = await launchBrowser({ bypassCSP: true, viewport: PHONE, timezoneId: 'UTC' });
  });
  after(async () => {
    await browser?.close();
    await console_?.close();
  });

  it('at 390 px: fits, reads, passes axe under the strict CSP, and its list says the phases', { timeout: 60_000 }, async () => {
    const page = await browser.page();
    await page.clock.setFixedTime(NOW);
    await page.goto(`${console_.base}/console`); // signs in (the stand-in sign-in)
    const response = await page.goto(`${console_.base}${PAGES['rejected']}`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    assert.match(csp, /style-src 'nonce-[^']+'(;|$)/);
    assert.match(csp, /script-src 'nonce-[^']+'(;|$)/);

    const picture = page.locator('#timeline svg');
    const box = await picture.boundingBox();
    assert.ok(box && box.width > 300 && box.x >= 0 && box.x + box.width <= PHONE.width, `the picture fits: ${JSON.stringify(box)}`);
    const words = await page.evaluate(() => {
      const texts = [...(globalThis as any).document.querySelectorAll('#timeline svg text')];
      return texts.map((t: any) => ({ text: t.textContent as string, height: t.getBoundingClientRect().height as number }));
    });
    assert.ok(words.length >= 4, JSON.stringify(words));
    for (const word of words) assert.ok(word.height >= 11, `"${word.text}" is drawn ${word.height} px high`);
    const bars = await page.locator('#timeline svg rect').count();
    assert.equal(bars, words.length, 'one bar a phase');

    const items = await page.locator('#timeline-list > li').allInnerTexts();
    assert.deepEqual(
      items.slice(0, words.length).map((item) => item.split(':')[0]),
      words.map((word) => word.text.split(':')[0]),
    );
    assert.ok(
      items.some((item) => /Waiting for a person/.test(item) && /decided by/.test(item)),
      `who decided is in the list: ${items.join(' | ')}`,
    );

    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const axe = (globalThis as any).axe;
      const { violations: found } = await axe.run({ include: [['#timeline']] });
      return found.map((v: any) => `${v.id} (${v.impact})`);
    });
    assert.deepEqual(violations, []);
    const scroll = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
    assert.ok(scroll <= PHONE.width, `no sideways scroll: ${scroll}`);
  });

  it("a running task's picture is redrawn from the live route, in the SVG namespace", { timeout: 60_000 }, async () => {
    const page = await browser.page();
    await page.clock.setFixedTime(NOW);
    await page.goto(`${console_.base}/console`);
    await page.goto(`${console_.base}${RUNNING}`);
    assert.match((await page.locator('#timeline-list > li').last().innerText()) ?? '', /still going/);
    // The script's first live read fills the picture again (`fill` marks what it drew).
    await page.waitForSelector('#timeline-picture[data-drawn]', { timeout: 30_000 });
    const drawn = await page.evaluate(() => {
      const svg = (globalThis as any).document.querySelector('#timeline-picture svg');
      return {
        ns: svg?.namespaceURI as string,
        width: svg?.getBoundingClientRect().width as number,
        rects: svg?.querySelectorAll('rect').length,
      };
    });
    assert.equal(drawn.ns, 'http://www.w3.org/2000/svg');
    assert.ok(drawn.width > 300, `drawn ${drawn.width} px wide`);
    assert.ok(drawn.rects >= 2);
  });
});
