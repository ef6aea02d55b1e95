/**
 * Crash recovery (issue 3, "What must show"): the local stack process is
 * killed with SIGKILL in the middle of a job and started again on the same
 * data directory. The table survives on disk; fauxqs' queues (the message in
 * flight, the pending wake-up) do not, so the task can only come back through
 * the sweeper, which runs at start-up and every LOCAL_SWEEP_INTERVAL_MS.
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
import { readEffects } from '../../functions/tools/testing/effects.ts';
import { countEntries, createTask, durableEnv, sleepMs, uniqueLabel, waitFor, waitForEffects } from '../support/durable.ts';
import { startLocalStackProcess, type LocalStackProcess } from '../support/local-stack.ts';
import { pollUntil } from '../support/mcp-http.ts';

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

  async function start(dataDir: string): Promise<LocalStackProcess> {
    const stack = await startLocalStackProcess({ dataDir, env: durableEnv(effectsDir) });
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
    stack.output().split('\n').some((line) => {
      if (!line.startsWith('{')) return false;
      const entry = JSON.parse(line) as Record<string, unknown>;
      return entry['event'] === event && entry['taskId'] === taskId && (outcome === undefined || entry['outcome'] === outcome);
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
    assert.ok(logged(second, 'swept', taskId), 're-enqueued by the sweeper of the new process');
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
    await sleepMs(200);
    await crash(first);
    assert.deepEqual(readEffects(label, effectsDir), ['before']);

    const second = await start(dataDir);
    const done = await pollUntil(second.url, taskId, (task) => task.status !== 'working', 30_000, 100);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const sleptMs = (done.result?.['structuredContent'] as { sleptMs?: number } | undefined)?.sleptMs;
    assert.ok(typeof sleptMs === 'number' && sleptMs >= 2500, `slept ${sleptMs} ms`);
    assert.deepEqual(readEffects(label, effectsDir), ['before', 'after']);
    assert.ok(logged(second, 'swept', taskId), 're-enqueued by the sweeper of the new process');
    await second.stop();
    running.delete(second);
  });
});
