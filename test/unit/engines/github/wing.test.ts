import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { sign } from '@octokit/webhooks-methods';
import { failedJobs, outcomeOf } from '../../../../shared/engines/github/conclusions.ts';
import { runReference, titleCarries } from '../../../../shared/engines/github/reference.ts';
import { signatureOf, validSignature } from '../../../../shared/engines/github/signature.ts';
import { classifyDelivery, WEBHOOK_BODY_LIMIT } from '../../../../shared/engines/github/webhook.ts';
import { purposeKey } from '../../../../shared/keys.ts';

const require = createRequire(import.meta.url);
/** GitHub's published `workflow_run` examples. */
const EXAMPLES = (
  require('@octokit/webhooks-examples/api.github.com/index.json') as { name: string; examples: Record<string, unknown>[] }[]
).find((event) => event.name === 'workflow_run')!.examples;
const COMPLETED = EXAMPLES.find(
  (example) => example.action === 'completed' && (example.workflow_run as { conclusion: string }).conclusion === 'success',
)!;
const SECRET = 'It’s a Secret to Everybody';

async function delivery(body: string, secret = SECRET, headers: Record<string, string> = {}) {
  return {
    headers: { 'x-hub-signature-256': await sign(secret, body), 'x-github-delivery': 'd-1', 'x-github-event': 'workflow_run', ...headers },
    body,
    isBase64Encoded: false,
  };
}

describe('a completed run’s conclusion', () => {
  for (const [conclusion, kind] of [
    ['success', 'completed'],
    ['failure', 'failed'],
    ['timed_out', 'failed'],
    ['startup_failure', 'failed'],
    ['action_required', 'failed'],
    ['cancelled', 'cancelled'],
    ['neutral', 'ignored'],
    ['skipped', 'ignored'],
    ['stale', 'ignored'],
    [null, 'ignored'],
  ] as const) {
    it(`${conclusion} → ${kind}`, () => assert.equal(outcomeOf(conclusion).kind, kind));
  }

  it('names the jobs that failed, not those that succeeded or were skipped', () => {
    const jobs = [
      { name: 'build', conclusion: 'success' },
      { name: 'test', conclusion: 'failure' },
      { name: 'lint', conclusion: 'timed_out' },
      { name: 'docs', conclusion: 'skipped' },
    ];
    assert.deepEqual(failedJobs(jobs), ['test', 'lint']);
  });
});

describe('the run’s reference', () => {
  const key = purposeKey(Buffer.alloc(32, 7), 'github-run-reference');

  it('is the same for a task, differs between tasks and between keys, and reveals no task id', () => {
    const taskId = 'tsk_3f9a1c2b7d';
    const reference = runReference(key, taskId);
    assert.equal(runReference(key, taskId), reference);
    assert.notEqual(runReference(key, 'tsk_other'), reference);
    assert.notEqual(runReference(purposeKey(Buffer.alloc(32, 8), 'github-run-reference'), taskId), reference);
    assert.ok(!reference.includes(taskId) && !reference.includes('3f9a1c2b7d'));
    assert.match(reference, /^mcp-[A-Za-z0-9_-]{22}$/);
  });

  it('is found in a title as a word of its own, not inside a longer one', () => {
    const reference = runReference(key, 't');
    assert.ok(titleCarries(`Release 1.2 ${reference}`, reference));
    assert.ok(titleCarries(`[${reference}]`, reference));
    assert.ok(!titleCarries(`Release ${reference}x`, reference));
    assert.ok(!titleCarries('Release 1.2', reference));
    assert.ok(!titleCarries(null, reference));
  });
});

describe('a webhook signature', () => {
  it('agrees with GitHub’s published methods, and refuses a forged, another secret’s, truncated or malformed one', async () => {
    const body = JSON.stringify(COMPLETED);
    const good = await sign(SECRET, body);
    assert.equal(signatureOf(SECRET, body), good);
    assert.ok(validSignature(SECRET, Buffer.from(body), good));
    assert.ok(!validSignature(SECRET, Buffer.from(body), await sign('another secret', body)));
    assert.ok(!validSignature(SECRET, Buffer.from(body), good.slice(0, -2)));
    assert.ok(!validSignature(SECRET, Buffer.from(body), `sha1=${good.slice(7)}`));
    assert.ok(!validSignature(SECRET, Buffer.from(body), undefined));
    assert.ok(!validSignature(SECRET, Buffer.from(`${body} `), good));
    assert.ok(!validSignature(SECRET, Buffer.from(body), `sha256=${'z'.repeat(64)}`));
  });
});

describe('a delivery to POST /webhooks/github', () => {
  it('a signed completed run: its run, conclusion and delivery id', async () => {
    const decision = classifyDelivery(SECRET, await delivery(JSON.stringify(COMPLETED)));
    const run = COMPLETED.workflow_run as { id: number };
    assert.deepEqual(decision, { status: 202, kind: 'completed', deliveryId: 'd-1', runId: run.id, conclusion: 'success' });
  });

  it('a base64 body is decoded before its signature is checked', async () => {
    const body = JSON.stringify(COMPLETED);
    const signed = await delivery(body);
    const decision = classifyDelivery(SECRET, { ...signed, body: Buffer.from(body).toString('base64'), isBase64Encoded: true });
    assert.equal(decision.status, 202);
    assert.equal('kind' in decision && decision.kind, 'completed');
  });

  it('refuses forged, another secret’s, truncated and oversized bodies before parsing them', async () => {
    const body = JSON.stringify(COMPLETED);
    assert.equal(classifyDelivery(SECRET, await delivery(body, 'another secret')).status, 401);
    const signed = await delivery(body);
    assert.equal(classifyDelivery(SECRET, { ...signed, body: body.slice(0, -10) }).status, 401);
    assert.equal(classifyDelivery(SECRET, { ...signed, headers: { ...signed.headers, 'x-hub-signature-256': undefined } }).status, 401);
    const huge = JSON.stringify({ ...COMPLETED, padding: 'x'.repeat(WEBHOOK_BODY_LIMIT) });
    assert.deepEqual(classifyDelivery(SECRET, await delivery(huge)), { status: 413, reason: 'too large' });
    // A signed body that is not JSON is refused, not thrown.
    assert.equal(classifyDelivery(SECRET, await delivery('not json')).status, 400);
  });

  it('ignores the events and actions it does not follow, from GitHub’s own examples', async () => {
    for (const example of EXAMPLES.filter((e) => e.action !== 'completed')) {
      const decision = classifyDelivery(SECRET, await delivery(JSON.stringify(example)));
      assert.deepEqual(decision, { status: 202, kind: 'ignored', reason: `action ${String(example.action)}` });
    }
    const ping = classifyDelivery(SECRET, await delivery('{"zen":"Keep it logically awesome."}', SECRET, { 'x-github-event': 'ping' }));
    assert.deepEqual(ping, { status: 202, kind: 'ignored', reason: 'event ping' });
    const anonymous = await delivery(JSON.stringify(COMPLETED));
    assert.equal(classifyDelivery(SECRET, { ...anonymous, headers: { ...anonymous.headers, 'x-github-delivery': undefined } }).status, 400);
  });
});
