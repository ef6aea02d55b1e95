/**
 * Crash recovery: the local stack
 * process is killed with SIGKILL (or stopped with Ctrl-C) in the middle of a
 * job and started again on the same data directory. The table survives on
 * disk; fauxqs' queues (the message in flight, the pending wake-up) do not,
 * so the task comes back through the start-up recovery, which voids the dead
 * process's lease and re-enqueues the task at once (a sleeper at its wake-up
 * time). The stack runs with the settings `npm start` uses (only the test
 * catalogue is added); a test that needs another setting says why.
 *
 * At-least-once window: a step's side effect happens inside `fn`, and its
 * checkpoint is written right after. A kill between the two loses the
 * checkpoint but not the effect, so that one step — the one in flight at the
 * kill — may run twice. Every step whose checkpoint was written runs once.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EFFECTS_DIR_ENV, readEffects } from '../../functions/fixtures/durability/effects.ts';
import { countEntries, createTask, uniqueLabel, waitForEffects } from '../support/durable.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { sleep, waitFor } from '../support/wait.ts';
import { pollUntil } from '../support/wire.ts';

describe('crash recovery (SIGKILL of the local stack, restart on the same data)', () => {
  let root: string;
  let effectsDir: string;
  const running = new Set<LocalStackProcess>();

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'mcp-tasks-crash-'));
    effectsDir = join(root, 'effects');
  });
  after(async () => {
    for (const stack of running) await stack.stop();
    await rm(root, { recursive: true, force: true });
  });

  async function start(dataDir: string, env: Record<string, string> = {}): Promise<LocalStackProcess> {
    const stack = await startLocalStackProcess({ dataDir, env: { TASKS_TOOLSET: 'test', [EFFECTS_DIR_ENV]: effectsDir, ...env } });
    running.add(stack);
    return stack;
  }

  /** SIGKILL, then wait for the exit (so the data directory's lock is free). */
  async function crash(stack: LocalStackProcess): Promise<void> {
    stack.kill('SIGKILL');
    await stack.stop();
    running.delete(stack);
  }

  /** Whether the process printed the functions' log line `event` for `taskId` (and `outcome`, if given). */
  const logged = (stack: LocalStackProcess, event: string, taskId: string, outcome?: string) =>
    stack
      .output()
      .split('\n')
      .some((line) => {
        if (!line.startsWith('{')) return false;
        const entry = JSON.parse(line) as Record<string, unknown>;
        return entry['event'] === event && entry['taskId'] === taskId && (outcome === undefined || entry['outcome'] === outcome);
      });

  it('batch_process killed mid-run resumes at the first unfinished item: no finished item is processed again', async () => {
    const dataDir = join(root, 'batch');
    const first = await start(dataDir);
    const items = Array.from({ length: 10 }, (_, index) => `item-${index}`);
    const taskId = await createTask(first.url, 'batch_process', { items, delayMs: 600 });
    const progressed = await pollUntil(first.url, taskId, (task) => /^Processed ([3-9]) of 10/.test(task.statusMessage ?? ''), 30_000, 100);
    await crash(first);
    const killedAt = Date.now();
    const finishedAtKill = Number(/^Processed (\d+)/.exec(progressed.statusMessage ?? '')?.[1]);

    const second = await start(dataDir);
    const done = await pollUntil(second.url, taskId, (task) => task.status !== 'working', 60_000, 100);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const processed =
      (done.result?.['structuredContent'] as { processed?: Array<{ item: number; processedAt: string }> } | undefined)?.processed ?? [];
    assert.deepEqual(
      processed.map((entry) => entry.item),
      items.map((_, index) => index),
    );
    for (const entry of processed.slice(0, finishedAtKill)) {
      assert.ok(Date.parse(entry.processedAt) < killedAt, `item ${entry.item} finished before the kill was not processed again`);
    }
  });

  it('finishes a multi-step job after a kill without re-running checkpointed steps', async (t) => {
    const dataDir = join(root, 'steps');
    const label = uniqueLabel('crash-steps');
    const first = await start(dataDir);
    const taskId = await createTask(first.url, 'step_sequence', { label, steps: 8, stepMs: 400 });

    await waitForEffects(label, effectsDir, (effects) => effects.length >= 3, 15_000);
    await crash(first);
    const atKill = readEffects(label, effectsDir);
    assert.ok(atKill.length >= 3 && atKill.length < 8, `killed mid-job: ${JSON.stringify(atKill)}`);

    const second = await start(dataDir);
    const done = await pollUntil(second.url, taskId, (task) => task.status !== 'working', 30_000, 100);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result?.['structuredContent'], { sum: 36 });

    const effects = readEffects(label, effectsDir);
    const counts = countEntries(effects);
    t.diagnostic(`effects at the kill: ${atKill.join(',')}; after recovery: ${effects.join(',')}`);
    assert.ok(logged(second, 'recovered', taskId), 're-enqueued at start-up by the new process');
    assert.equal(counts.size, 8, `every step ran: ${JSON.stringify(effects)}`);
    // Steps are sequential: only the last effect seen at the kill can lack its checkpoint.
    const inFlight = atKill.at(-1)!;
    for (let i = 1; i <= 8; i++) {
      const step = `step-${i}`;
      const times = counts.get(step) ?? 0;
      if (step === inFlight) assert.ok(times === 1 || times === 2, `${step} (in flight at the kill) ran ${times} times`);
      else assert.equal(times, 1, `${step} ran ${times} times: ${JSON.stringify(effects)}`);
    }
    await second.stop();
    running.delete(second);
  });

  it('wakes a durable sleep whose wake-up message died with the process', async () => {
    const dataDir = join(root, 'sleep');
    const label = uniqueLabel('crash-sleep');
    const first = await start(dataDir);
    const taskId = await createTask(first.url, 'durable_sleep', { label, ms: 2500 });

    await waitForEffects(label, effectsDir, (effects) => effects.includes('before'), 15_000);
    // Let the worker checkpoint the sleep and enqueue the (delayed) wake-up; then lose it.
    await waitFor('the run to suspend on the sleep', () => logged(first, 'ran', taskId, 'sleep'), 10_000);
    await sleep(200);
    await crash(first);
    assert.deepEqual(readEffects(label, effectsDir), ['before']);

    const second = await start(dataDir);
    const done = await pollUntil(second.url, taskId, (task) => task.status !== 'working', 30_000, 100);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const sleptMs = (done.result?.['structuredContent'] as { sleptMs?: number } | undefined)?.sleptMs;
    assert.ok(typeof sleptMs === 'number' && sleptMs >= 2500, `slept ${sleptMs} ms`);
    assert.deepEqual(readEffects(label, effectsDir), ['before', 'after']);
    assert.ok(logged(second, 'recovered', taskId), 're-enqueued at start-up by the new process');
    await second.stop();
    running.delete(second);
  });

  it('hands a running job back on Ctrl-C (SIGINT) and finishes it after the restart', async (t) => {
    const dataDir = join(root, 'sigint');
    const label = uniqueLabel('sigint');
    const first = await start(dataDir);
    // 20 steps of 500 ms: still running when the 5 s drain of the stop is over, so there is work to hand back.
    const taskId = await createTask(first.url, 'step_sequence', { label, steps: 20, stepMs: 500 });
    await waitForEffects(label, effectsDir, (effects) => effects.length >= 2, 30_000);
    first.kill('SIGINT');
    assert.equal(await first.stop(), 0, first.output());
    running.delete(first);
    assert.ok(logged(first, 'handed-back', taskId), `the stopping process handed the task back:\n${first.output()}`);
    const atStop = readEffects(label, effectsDir).length;
    assert.ok(atStop < 20, `stopped mid-job: ${atStop} steps`);

    const restartedAt = Date.now();
    const second = await start(dataDir);
    const done = await pollUntil(second.url, taskId, (task) => task.status !== 'working', 60_000, 100);
    t.diagnostic(`finished ${Date.now() - restartedAt} ms after the restart began (the rest of the job included)`);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result?.['structuredContent'], { sum: 210 });
    assert.ok(logged(second, 'recovered', taskId), 're-enqueued at start-up by the new process');
    assert.ok(!second.output().includes('"voidedLease":true'), 'no lease was left to void');
    assert.equal(countEntries(readEffects(label, effectsDir)).size, 20);
    await second.stop();
    running.delete(second);
  });

  it('finishes a job that records steps although it is killed more often than the attempt cap', async (t) => {
    const dataDir = join(root, 'progress');
    const label = uniqueLabel('progress');
    // A cap of 2 (instead of 5) keeps the number of kills, and so the test's length, small.
    const env = { TASKS_MAX_ATTEMPTS: '2' };
    const kills = 4;
    let stack = await start(dataDir, env);
    const taskId = await createTask(stack.url, 'step_sequence', { label, steps: 12, stepMs: 300 });
    const lives: LocalStackProcess[] = [];
    for (let kill = 1; kill <= kills; kill++) {
      const before = readEffects(label, effectsDir).length;
      // Two more effects: the first of them has its checkpoint written (steps run one after another).
      await waitForEffects(label, effectsDir, (effects) => effects.length >= before + 2, 60_000);
      await crash(stack);
      lives.push(stack);
      stack = await start(dataDir, env);
    }
    lives.push(stack);
    const done = await pollUntil(stack.url, taskId, (task) => task.status !== 'working', 60_000, 100);
    t.diagnostic(`effects: ${readEffects(label, effectsDir).join(',')}`);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result?.['structuredContent'], { sum: 78 });
    // Every life claimed the task once: past the cap, the recorded steps restarted the count instead of failing it.
    assert.ok(
      lives.some((life) => logged(life, 'attempts-restarted', taskId)),
      'the attempt count was restarted by progress',
    );
    await stack.stop();
    running.delete(stack);
  });
});
