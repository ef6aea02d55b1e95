/**
 * Helpers for the durability and crash-recovery tests: small timings for the
 * stack, creating a task over HTTP, waiting on side effects recorded by the
 * durability fixtures (`functions/fixtures/durability/`), and counting them.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readEffects } from '../../functions/fixtures/durability/effects.ts';
import { IDEMPOTENCY_KEY } from '../../shared/wire.ts';
import { waitFor } from './wait.ts';
import { type RpcOptions, requestMeta, resultOf, rpc } from './wire.ts';

/**
 * Timings small enough for a test to see leases expire, sweeps happen and
 * redeliveries come back within seconds: for the durability tests only,
 * which wait on exactly those (e2e, conformance and crash tests run with the
 * settings `npm start` uses). `TASKS_*` are the functions' own settings;
 * `LOCAL_*` are read by `bin/local/main.ts` only.
 */
export function durableEnv(effectsDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TASKS_TOOLSET: 'test',
    TASKS_TEST_EFFECTS_DIR: effectsDir,
    // A lease that expires (a lost worker, a late claim) within seconds, not 5 minutes.
    TASKS_LEASE_MS: '1500',
    // The sweeper re-enqueues a stuck task half a second after its lease ends.
    TASKS_SWEEP_GRACE_MS: '500',
    // Heartbeats (renewals, cancellation checks) several times per short lease.
    TASKS_CANCEL_CHECK_MS: '200',
    // Progress of steps that take ~100 ms is written, not throttled away.
    TASKS_PROGRESS_INTERVAL_MS: '100',
    // Retries with backoff finish within the test.
    TASKS_RETRY_BASE_DELAY_MS: '100',
    // Sweeps every 300 ms, so a lost message is noticed at once.
    LOCAL_SWEEP_INTERVAL_MS: '300',
    // A failed delivery comes back after 1 s, and reaches the DLQ after 3.
    LOCAL_VISIBILITY_TIMEOUT_SECONDS: '1',
    LOCAL_MAX_RECEIVE_COUNT: '3',
    ...extra,
  };
}

/** A label unique to this run, so that effect files never mix between tests. */
export function uniqueLabel(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** `tools/call` as a task-aware client; returns the CreateTaskResult's task id. */
export async function createTask(
  url: string,
  name: string,
  args: Record<string, unknown>,
  options: { idempotencyKey?: string } & RpcOptions = {},
): Promise<string> {
  const { idempotencyKey, ...rpcOptions } = options;
  const meta = idempotencyKey === undefined ? undefined : { ...requestMeta(), [IDEMPOTENCY_KEY]: idempotencyKey };
  const created = resultOf(await rpc(url, 'tools/call', { name, arguments: args }, meta ? { ...rpcOptions, meta } : rpcOptions));
  assert.equal(created['resultType'], 'task', `expected a CreateTaskResult, got ${JSON.stringify(created)}`);
  assert.equal(typeof created['taskId'], 'string');
  return created['taskId'] as string;
}

/** Waits until the effects recorded for `label` satisfy `predicate`; returns them. */
export function waitForEffects(
  label: string,
  dir: string,
  predicate: (effects: string[]) => boolean,
  timeoutMs = 10_000,
): Promise<string[]> {
  return waitFor(
    `effects of ${label}`,
    () => {
      const effects = readEffects(label, dir);
      return predicate(effects) ? effects : undefined;
    },
    timeoutMs,
  );
}

/** How many times each entry occurs. */
export function countEntries(entries: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of entries) counts.set(entry, (counts.get(entry) ?? 0) + 1);
  return counts;
}
