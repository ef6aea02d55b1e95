/**
 * The task page's timeline: its text alternative (the list of the phases) for
 * a simple task, a question for a person decided by an approver, a callback,
 * a workflow and a lost and recovered run, driven through the in-memory store
 * on a clock of the test's own; what an approver sees of it; the rows the
 * previous release wrote (`test/upgrade/`), which have no moments; and the
 * owner's page in process: the picture inline, under a CSP without inline
 * styles or scripts, and the same nodes in its live read.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { xrayTraceUrl } from '../../../bin/ops/ops.ts';
import { waterfall } from '../../../bin/ops/trace.ts';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { createConsoleApp } from '../../../shared/console/app.tsx';
import type { LiveView } from '../../../shared/console/live.ts';
import type { UiNode } from '../../../shared/console/nodes.ts';
import { timelineNodes } from '../../../shared/console/timeline.ts';
import { purposeKeys } from '../../../shared/keys.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import type { CallbackWait } from '../../../shared/tasks/callbacks-model.ts';
import { taskFromItem } from '../../../shared/tasks/dynamodb/index.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { ANSWERED_BY_META, type TaskRecord } from '../../../shared/tasks/model.ts';
import { approversTimeline, timelineOf } from '../../../shared/tasks/timeline.ts';
import { WORKFLOW_END_ID } from '../../../shared/tasks/workflows-model.ts';
import { CONTRACT_POLICY, contractKit, ELICIT, LEASE, OWNER, RESULT, T0 } from '../../contract/kit.ts';

const PERSON = { method: 'elicitation/create' as const, params: { ...ELICIT.params, _meta: { [ANSWERED_BY_META]: 'person' } } };
const ADA = { principal: 'ada', name: 'Ada', approver: true };
const LATER = T0 + 100_000;

/** The text of a node, as a screen reader reads it (times as their words). */
function text(node: UiNode): string {
  return typeof node === 'string' ? node : (node.children ?? []).map(text).join('');
}

/** The text alternative's items, top level only (each phase, then the end), with their nested lines. */
function listOf(nodes: readonly UiNode[]): string[] {
  const list = nodes.find((node) => typeof node !== 'string' && node.attrs?.id === 'timeline-list');
  assert.ok(list && typeof list !== 'string', 'the page has the list');
  return (list.children ?? []).map(text);
}

function fresh() {
  const store = new InMemoryTaskStore(CONTRACT_POLICY);
  return { store, kit: contractKit(() => store) };
}

async function finished(store: InMemoryTaskStore, taskId: string, worker: string, claimAt: number, endAt: number): Promise<TaskRecord> {
  const run = await store.claim(taskId, worker, claimAt);
  assert.ok(run);
  return store.finish(run, worker, { status: 'completed', result: RESULT }, endAt);
}

describe("the task page's timeline", () => {
  it('a simple task: queued, one run, the end', async () => {
    const { store, kit } = fresh();
    const task = await kit.created();
    const ended = await finished(store, task.taskId, 'w1', T0 + 200, T0 + 1200);
    assert.deepEqual(listOf(timelineNodes(timelineOf(ended, LATER), LATER)), [
      'Queued: 200ms, 17%, from +0ms',
      'Running (run 1): 1s, 83%, from +200ms',
      'Ended completed at +1s',
    ]);
  });

  it("a task created in a trace: ops trace names the trace, and deployed links it to X-Ray's console", async () => {
    const { store, kit } = fresh();
    const task = await kit.created();
    const ended = await finished(store, task.taskId, 'w1', T0 + 200, T0 + 1200);
    const traceId = randomBytes(16).toString('hex');
    const traced = timelineOf({ ...ended, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` }, LATER);
    assert.equal(traced.traceId, traceId);
    assert.equal(timelineOf(ended, LATER).traceId, undefined);
    assert.equal(waterfall(traced).split('\n')[2], `trace ${traceId}`);
    const url = xrayTraceUrl('eu-west-1', traceId);
    assert.equal(
      url,
      `https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#xray:traces/1-${traceId.slice(0, 8)}-${traceId.slice(8)}`,
    );
    assert.equal(waterfall({ ...traced, traceUrl: url }).split('\n')[2], `trace ${traceId} (X-Ray: ${url})`);
    assert.ok(!waterfall(timelineOf(ended, LATER)).includes('trace '));
  });

  it('a question for a person decided by an approver: the wait says who decided it and when', async () => {
    const { store, kit } = fresh();
    const { task, leaseOwner } = await kit.claimed({}, T0 + 10);
    await store.finish(task, leaseOwner, { status: 'input_required', inputRequests: { approval: PERSON } }, T0 + 20);
    await store.decide(task.taskId, ADA, { approval: { action: 'accept' } }, T0 + 60_020);
    const ended = await finished(store, task.taskId, 'w2', T0 + 60_030, T0 + 60_100);
    const items = listOf(timelineNodes(timelineOf(ended, LATER), LATER));
    assert.deepEqual(items, [
      'Queued: 10ms, 0%, from +0ms',
      'Running (run 1): 10ms, 0%, from +10ms',
      'Waiting for a person: 1m, 100%, from +20ms"approval" decided by Ada as an approver, on this page, just now',
      'Queued: 10ms, 0%, from +1m',
      'Running (run 2): 70ms, 0%, from +1m',
      'Ended completed at +1m',
    ]);
    // An approver who decided sees that wait alone; one who took no part sees nothing.
    const timeline = timelineOf(ended, LATER);
    assert.deepEqual(listOf(timelineNodes(approversTimeline(timeline, 'ada'), LATER)), [items[2], 'Ended completed at +1m']);
    assert.deepEqual(timelineNodes(approversTimeline(timeline, 'eve'), LATER).map(text), ['Nothing to show yet.']);
  });

  it('a callback and a workflow: the wait, what was posted and when', async () => {
    const { store, kit } = fresh();
    const { task, leaseOwner } = await kit.claimed({}, T0 + 10);
    const wait: CallbackWait = { callbacks: { job: { since: T0 + 15, timeoutAt: T0 + 600_000 } } };
    await store.awaitCallbacks(task.taskId, leaseOwner, { seen: undefined, wait, statusMessage: 'W' }, T0 + 20);
    await store.completeCallback(task.taskId, 'job', { error: { message: 'no' } }, T0 + 5_020);
    const called = await finished(store, task.taskId, 'w2', T0 + 5_030, T0 + 5_100);
    assert.deepEqual(listOf(timelineNodes(timelineOf(called, LATER), LATER)).slice(2, 3), [
      'Waiting for a callback: 5s, 98%, from +20msCallback "job" posted an error, 2 minutes ago',
    ]);

    const flow = await kit.claimed({}, T0 + 10);
    const execution = 'arn:aws:states:us-east-1:123456789012:execution:deploy:t';
    await store.followExecution(flow.task.taskId, execution);
    const onEnd: CallbackWait = { callbacks: { [WORKFLOW_END_ID]: { since: T0 + 15, timeoutAt: T0 + 10 ** 9 } } };
    await store.awaitCallbacks(flow.task.taskId, flow.leaseOwner, { seen: undefined, wait: onEnd, statusMessage: 'W' }, T0 + 20);
    await store.endWorkflow(flow.task.taskId, { status: 'FAILED', execution, error: 'Boom' }, () => undefined, T0 + 9_020);
    const ended = await finished(store, flow.task.taskId, 'w2', T0 + 9_030, T0 + 9_100);
    assert.deepEqual(listOf(timelineNodes(timelineOf(ended, LATER), LATER)).slice(2, 3), [
      'Waiting for the workflow: 9s, 99%, from +20msThe workflow ended (failed), 2 minutes ago',
    ]);
  });

  it('a run lost and recovered: said in the list and counted', async () => {
    const { store, kit } = fresh();
    const { task } = await kit.claimed({}, T0 + 10);
    const ended = await finished(store, task.taskId, 'w2', T0 + 10 + LEASE + 1, T0 + 10 + LEASE + 101);
    const timeline = timelineOf(ended, LATER);
    assert.equal(timeline.recoveries, 1);
    assert.deepEqual(listOf(timelineNodes(timeline, LATER)).slice(1, 3), [
      `Run lost, then recovered (run 1): ${LEASE / 1000}s, ${Math.round(((LEASE + 1) / (LEASE + 101)) * 100)}%, from +10msIts worker stopped; the next run took the task over.`,
      `Running (run 2): 100ms, ${Math.round((100 / (LEASE + 101)) * 100)}%, from +${LEASE / 1000}s`,
    ]);
  });

  it("the previous release's rows, which have no moments: one phase from their creation, named by what they do", async () => {
    const fixture = JSON.parse(await readFile(new URL('../../upgrade/0.1.0/fixture.json', import.meta.url), 'utf8')) as {
      capturedAt: number;
      items: Array<Record<string, { S?: string }>>;
    };
    const rows = fixture.items.filter((item) => item['sk']?.S === 'task').map((item) => taskFromItem(item as never));
    assert.ok(rows.length >= 4);
    for (const row of rows) {
      const timeline = timelineOf(row, fixture.capturedAt);
      assert.equal(timeline.recorded, false);
      assert.equal(timeline.phases.length, 1, row.tool);
      const expected = row.status === 'input_required' ? /^wait:(person|client)$/ : /^run$/;
      assert.match(timeline.phases[0]!.phase, expected);
      const nodes = timelineNodes(timeline, fixture.capturedAt);
      assert.match(text(nodes[0]!), /started before its moments were recorded/);
      assert.match(waterfall(timeline), /written by a release that did not record moments/);
    }
  });

  it("the owner's page draws the picture inline under its CSP, and its live read carries the same nodes", async () => {
    const store = new InMemoryTaskStore({ ...CONTRACT_POLICY, listing: { sharedOwner: OWNER } });
    const task = await contractKit(() => store).created();
    await finished(store, task.taskId, 'w1', T0 + 5, T0 + 9);
    const app = createConsoleApp({
      actions: new TaskActions({ store, queue: new InMemoryTaskQueue(), log: () => {}, now: () => T0 + 10 }),
      mode: { kind: 'open' },
      links: new DeploymentLinks('http://127.0.0.1:8788/mcp'),
      keys: purposeKeys(async () => randomBytes(32)),
      signOutRecords: store,
      signInNameRecords: store,
      config: { retentionMs: CONTRACT_POLICY.retentionMs, pollIntervalMs: 1000, maxPollIntervalMs: 30_000, maxInputWaitMs: 3_600_000 },
      approvers: { groups: [], scopes: [] },
      localPrincipal: OWNER,
      log: () => {},
      now: () => T0 + 10,
    });
    const cookie = ((await app.request('/console')).headers.get('set-cookie') ?? '').split(';')[0]!;
    const response = await app.request(`/console/tasks/${task.taskId}`, { headers: { cookie } });
    const page = await response.text();
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.match(page, /<section id="timeline"[^>]*><h2 id="timeline-heading">Timeline<\/h2>/);
    assert.match(page, /<svg viewBox="0 0 360 \d+" role="img" aria-label="Timeline: 2 phases, 9ms in all\./);
    assert.match(page, /<rect x="0\.0" y="\d+" width="\d+\.\d" height="10" class="tl-bar tl-queued">/);
    assert.doesNotMatch(page.slice(page.indexOf('<svg'), page.indexOf('</svg>')), /style=/);
    const live = (await (await app.request(`/console/tasks/${task.taskId}/live`, { headers: { cookie } })).json()) as LiveView;
    assert.deepEqual(live.timelineNodes, timelineNodes(timelineOf((await store.get(task.taskId, OWNER, T0 + 10))!, T0 + 10), T0 + 10));
  });
});
