/**
 * The console's built page script is current: `shared/console/live-script.ts`
 * is exactly what `bin/scripts/console-script.ts` builds from
 * `shared/console/client/` now, so the pages (local and deployed alike) run
 * the source that is type-checked, linted and tested.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { LIVE_SCRIPT_MODULE, liveScriptModule } from '../../bin/scripts/console-script.ts';
import { LIVE_SCRIPT } from '../../shared/console/live-script.ts';

describe('the console page script', () => {
  it('is built from its current source (run `npx tsx bin/scripts/console-script.ts` after editing shared/console/client/)', async () => {
    assert.equal(readFileSync(LIVE_SCRIPT_MODULE, 'utf8'), await liveScriptModule());
  });

  it('is one self-contained IIFE that can be inlined in a <script> element', () => {
    assert.match(LIVE_SCRIPT, /^"use strict";\(\(\)=>\{/);
    assert.doesNotMatch(LIVE_SCRIPT, /<\/script|<!--|\bimport\b|\brequire\(/i);
    assert.doesNotThrow(() => new Function(LIVE_SCRIPT), 'it parses');
  });
});
