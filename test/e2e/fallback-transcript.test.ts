/**
 * docs/connecting.md's "A fallback run" is what a run says today: the
 * session of `transcript.ts` against `npm start`'s defaults, compared with the
 * page's block once task ids, the port and the times are set aside.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { CONNECTING_PAGE, fallbackTranscript, normalized, transcriptIn } from './transcript.ts';

let stack: LocalStackProcess;
before(async () => {
  stack = await startLocalStackProcess();
});
after(async () => {
  await stack?.stop();
});

describe('docs/connecting.md, a fallback run', () => {
  it('is what the run says (npx tsx test/e2e/transcript.ts rewrites it)', { timeout: 180_000 }, async () => {
    const run = await fallbackTranscript(stack.url);
    assert.match(run, /Computed report in 25 s: [0-9a-f]{16}/, 'the computation ended with its result');
    assert.match(run, /Approved and done: deploy web@1\.4\.2 to production/, 'the approval ended with its result');
    assert.equal(normalized(transcriptIn(readFileSync(CONNECTING_PAGE, 'utf8'))), normalized(run));
  });

  it('sets aside only what changes from run to run', () => {
    const text =
      '--- t=0.4 s  call 90b05aec-7702-4d6d-9170-7a2a6c34e84e http://127.0.0.1:39211/mcp (answered in 20.1 s) Computed 15 of 25 s';
    assert.equal(normalized(text), '--- t=<s>  call <task id> http://127.0.0.1:<port>/mcp (answered in <s>) Computed <n> of 25 s');
    assert.equal(normalized('"decidedAt": "2026-12-02T07:40:19.478Z"'), '"decidedAt": "<time>"');
    assert.notEqual(normalized('Computed report in 25 s: d56d6556dbb9c0bb'), normalized('Computed report in 25 s: 0000000000000000'));
  });
});
