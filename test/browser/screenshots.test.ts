/**
 * The pictures in the docs are current: every page `npm run screenshots`
 * photographs renders (same clock, ids and tasks) with the text the
 * committed snapshot holds. A change to what a page says fails here until
 * `npm run screenshots` is run again, which redraws the pictures too.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PAGES } from './screenshot-console.ts';
import { pageText, renderPages, SNAPSHOT } from './screenshots.ts';

describe("the console's pictures", () => {
  it('show the pages as they render now (run `npm run screenshots` after changing what a page says)', { timeout: 120_000 }, async () => {
    const committed = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<string, string>;
    assert.deepEqual(Object.keys(committed).sort(), Object.keys(PAGES).sort(), 'one snapshot a page');
    const rendered: Record<string, string> = {};
    await renderPages(async (name, size, page) => {
      if (size === 'desktop') rendered[name] = await pageText(page);
    });
    for (const name of Object.keys(PAGES)) assert.equal(rendered[name], committed[name], `the ${name} page's text`);
  });
});
