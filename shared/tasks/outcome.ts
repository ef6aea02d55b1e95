import type { TaskOutcome, TaskRecord, WorkingTask } from './model.ts';
import type { NewTask, StorePolicy } from './store.ts';
import { extendedTtl } from './ttl.ts';

/**
 * The record after `outcome`: lease released, TTL extended, status-specific
 * fields set. With `maxInputWaitMs`, a task that starts waiting for input is
 * due for the sweeper at the end of its wait (`sweepAt = now + maxInputWaitMs`,
 * which puts it on the sparse index), and its TTL covers that deadline plus
 * the retention, so the TTL it advertises while waiting is never shortened
 * when the wait ends (answered, cancelled or expired).
 */
export function applyOutcome(task: TaskRecord, outcome: TaskOutcome, now: number, retentionMs: number, maxInputWaitMs?: number): TaskRecord {
  // The lease is released; no outcome leaves work for the sweeper to find.
  const { lease: _released, sweepAt: _swept, ...base } = task;
  const common = {
    ...stripStatusFields(base),
    lastUpdatedAt: now,
    ttlMs: extendedTtl(task, now, retentionMs),
    version: task.version + 1,
  };
  switch (outcome.status) {
    case 'completed':
      return { ...common, status: 'completed', result: outcome.result };
    case 'failed':
      return { ...common, status: 'failed', error: outcome.error, statusMessage: outcome.statusMessage ?? common.statusMessage };
    case 'cancelled':
      return { ...common, status: 'cancelled', statusMessage: outcome.statusMessage ?? common.statusMessage };
    case 'input_required':
      return {
        ...common,
        ...(maxInputWaitMs === undefined
          ? {}
          : { sweepAt: now + maxInputWaitMs, ttlMs: Math.max(common.ttlMs, now + maxInputWaitMs - task.createdAt + retentionMs) }),
        attempts: 0, // waiting for answers is a clean hand-over
        status: 'input_required',
        inputRequests: outcome.inputRequests,
        issuedKeys: [...new Set([...common.issuedKeys, ...Object.keys(outcome.inputRequests)])],
      };
  }
}

function stripStatusFields(task: Omit<TaskRecord, 'lease'>) {
  const { status: _s, ...rest } = task as Record<string, unknown>;
  delete rest['inputRequests'];
  delete rest['result'];
  delete rest['error'];
  return rest as Omit<WorkingTask, 'status'>;
}


/**
 * A new task's record: `working`, no lease, on the sweeper's index from the
 * start (due once a worker should have taken it and its first lease ended).
 */
export function newTaskRecord(task: NewTask, policy: Pick<StorePolicy, 'leaseMs' | 'sweepGraceMs'>): WorkingTask {
  return {
    taskId: task.taskId,
    owner: task.owner,
    tool: task.tool,
    arguments: task.arguments,
    clientCapabilities: task.clientCapabilities,
    status: 'working',
    createdAt: task.now,
    lastUpdatedAt: task.now,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    inputResponses: task.inputResponses,
    issuedKeys: [],
    cancelRequested: false,
    attempts: 0,
    sweepAt: task.now + policy.leaseMs + policy.sweepGraceMs,
    version: 1,
  };
}
