/**
 * The shared kit of the {@link TaskStore} contract: the policy and
 * constants every case uses, fresh tasks, and scenario builders (a task
 * created, claimed, waiting, completed) over the store under test.
 *
 * The sweeper cases (`findDue`) need a store in which no other case's task is
 * due: each of them works in a time window of its own ({@link isolatedWindow}),
 * far before `T0` and before every earlier window, so nothing created
 * elsewhere is ever due there.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { InputRequest, JsonRpcErrorObject, TaskRecord } from '../../shared/tasks/model.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import type { NewTask, StorePolicy } from '../../shared/tasks/store-types.ts';
import { newTask as newTaskFrom } from '../support/factories.ts';

/** The principal that owns every task of an open endpoint, in the list cases: its list spans several partitions. */
export const SHARED_OWNER = 'local';

/** The policy every store under test must be built with (its `leaseMs` is the lease the cases take). */
export const CONTRACT_POLICY: StorePolicy = {
  retentionMs: 3_600_000,
  sweepGraceMs: 60_000,
  leaseMs: 10_000,
  stepRetentionMs: 30 * 86_400_000,
  listing: { sharedOwner: SHARED_OWNER },
  approvals: true,
};

/** What `makeStore` hands the suite; `close` runs once, after the last case. */
export interface StoreUnderTest {
  store: TaskStore;
  close?: () => Promise<void>;
}

export const RETENTION = CONTRACT_POLICY.retentionMs;
export const GRACE = CONTRACT_POLICY.sweepGraceMs;
export const LEASE = CONTRACT_POLICY.leaseMs;
/** W: how long after a task is due to run the sweeper looks at it (one lease plus the grace). */
export const W = LEASE + GRACE;
export const T0 = 1_700_000_000_000;
export const TTL = 60_000;
export const OWNER = 'alice';
export const STRANGER = 'mallory';
/** Far past every TTL and retention window the suite uses. */
export const MUCH_LATER = 1000 * (TTL + RETENTION);

export const ELICIT: InputRequest = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Which file?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
};
export const SAMPLE: InputRequest = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 10 } };
export const RESULT = { content: [{ type: 'text', text: 'done' }], structuredContent: { n: 1 }, resultType: 'complete' };
export const ERROR: JsonRpcErrorObject = { code: -32602, message: 'Bad input', data: { field: 'name' } };

/** Milliseconds after the suite's epoch `T0`. */
export function at(ms: number): number {
  return T0 + ms;
}

let windows = 0;
/** The start of a sweeper window no other case shares (see the file comment). */
export function isolatedWindow(): number {
  windows += 1;
  return T0 - windows * 10_000_000_000;
}

/** A new task as the contract cases create it (the shared factory with this suite's owner, tool and clock). */
export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return newTaskFrom({
    owner: OWNER,
    tool: 'confirm_delete',
    arguments: { filename: 'a.txt', options: { force: false, tags: ['x', 1, null] } },
    clientCapabilities: { elicitation: { form: {} }, sampling: {} },
    now: T0,
    ttlMs: TTL,
    pollIntervalMs: 1500,
    ...overrides,
  });
}

/** What every case gets: the store under test and the scenario builders over it. */
export interface ContractKit {
  store: () => TaskStore;
  read: (taskId: string, now?: number) => Promise<TaskRecord>;
  created: (overrides?: Partial<NewTask>) => Promise<TaskRecord>;
  claimed: (overrides?: Partial<NewTask>, now?: number) => Promise<{ task: TaskRecord; leaseOwner: string }>;
  waiting: (requests: Record<string, InputRequest>, overrides?: Partial<NewTask>) => Promise<TaskRecord>;
  completed: (overrides?: Partial<NewTask>) => Promise<TaskRecord>;
}

/** The kit over `store` (called when a case runs, once the store exists). */
export function contractKit(store: () => TaskStore): ContractKit {
  const read = async (taskId: string, now = at(LEASE * 3)): Promise<TaskRecord> => {
    const task = await store().get(taskId, OWNER, now);
    assert.ok(task, `task ${taskId} should be readable`);
    return task;
  };

  const created = async (overrides: Partial<NewTask> = {}): Promise<TaskRecord> => {
    const { task, created: isNew } = await store().create(newTask(overrides));
    assert.equal(isNew, true);
    return task;
  };

  /** A task claimed at `now` by a fresh lease owner. */
  const claimed = async (overrides: Partial<NewTask> = {}, now = at(1)) => {
    const { taskId } = await created(overrides);
    const leaseOwner = `worker-${randomUUID()}`;
    const task = await store().claim(taskId, leaseOwner, now);
    assert.ok(task, 'a fresh task can be claimed');
    return { task, leaseOwner };
  };

  /** A task waiting for input on `requests` (claimed at `now` + 1 ms, finished at `now` + 2 ms). */
  const waiting = async (requests: Record<string, InputRequest>, overrides: Partial<NewTask> = {}) => {
    const base = overrides.now ?? T0;
    const { task, leaseOwner } = await claimed(overrides, base + 1);
    const finished = await store().finish(task, leaseOwner, { status: 'input_required', inputRequests: requests }, base + 2);
    assert.equal(finished.status, 'input_required');
    return finished;
  };

  /** A task completed at `now` + 2 ms (claimed at `now` + 1 ms). */
  const completed = async (overrides: Partial<NewTask> = {}) => {
    const base = overrides.now ?? T0;
    const { task, leaseOwner } = await claimed(overrides, base + 1);
    return store().finish(task, leaseOwner, { status: 'completed', result: RESULT }, base + 2);
  };

  return { store, read, created, claimed, waiting, completed };
}
