/**
 * The local stack the hostile-input suites run against, with a store that can
 * be made to fail on cue, and the suite's closing checks: every task it got
 * accepted reaches a terminal state, and no log line carries client data.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { principalFor } from '../../shared/auth/principal.ts';
import type { LogEvent } from '../../shared/log.ts';
import { isTerminal } from '../../shared/tasks/model.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import { waitFor } from '../support/wait.ts';
import { type RpcOptions, resultOf, type Wire } from '../support/wire.ts';

/** The principal the local stack gives every request without an authorizer. */
export const PRINCIPAL = 'local';

/** A string of `bytes` ASCII characters. */
export const pad = (bytes: number) => 'x'.repeat(bytes);

export interface HostileStack {
  /** The running stack (set by the `before` hook). */
  readonly stack: LocalStack;
  /** Every line the stack logged. */
  readonly logs: LogEvent[];
  /** Every task the suite got accepted, with its owner: each must end. */
  readonly accepted: { taskId: string; owner: string }[];
  /** Task ids whose claim the decorated store refuses with AccessDenied. */
  readonly deniedClaims: Set<string>;
  /** Labels whose task creation throws raw exception text. */
  readonly boom: Map<string, Error>;
  /** Starts a `slow_compute` task over `wire` and records it as accepted; resolves to its id. */
  callTask(wire: Wire, args: Record<string, unknown>, options?: RpcOptions & { principal?: string }): Promise<string>;
}

/** Registers, in the calling `describe`, the hooks that start the stack and run the closing checks. */
export function hostileStack(): HostileStack {
  let stack: LocalStack;
  let dataDir: string;
  const logs: LogEvent[] = [];
  const accepted: { taskId: string; owner: string }[] = [];
  const deniedClaims = new Set<string>();
  const boom = new Map<string, Error>();

  const decorateStore = (store: TaskStore): TaskStore => {
    const overrides: Partial<TaskStore> = {
      claim: (taskId, ...rest) => {
        if (deniedClaims.has(taskId)) {
          const error = new Error('User is not authorized to perform: dynamodb:UpdateItem');
          error.name = 'AccessDeniedException';
          return Promise.reject(error);
        }
        return store.claim(taskId, ...rest);
      },
      create: (task, options) => {
        const label = (task.arguments as { label?: unknown }).label;
        const error = typeof label === 'string' ? boom.get(label) : undefined;
        return error ? Promise.reject(error) : store.create(task, options);
      },
    };
    return new Proxy(store, {
      get(target, property, receiver) {
        if (property in overrides) return overrides[property as keyof TaskStore];
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };

  const callTask = async (wire: Wire, args: Record<string, unknown>, options: RpcOptions & { principal?: string } = {}) => {
    const result = resultOf(await wire.call('tools/call', { name: 'slow_compute', arguments: args }, options));
    assert.equal(result['resultType'], 'task');
    const taskId = String(result['taskId']);
    // An authorizer's subject owns its tasks as issuer + subject (the claims here carry no issuer).
    accepted.push({ taskId, owner: options.principal === undefined ? PRINCIPAL : principalFor('', options.principal) });
    return taskId;
  };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-hostile-'));
    stack = await startLocalStack({
      port: 0,
      dataDir,
      log: (event) => void logs.push(event),
      visibilityTimeoutSeconds: 2,
      maxReceiveCount: 2,
      sweepIntervalMs: 60_000,
      env: { TASKS_TOOLSET: 'all', TASKS_CANCEL_CHECK_MS: '100', TASKS_LEASE_MS: '60000' },
      decorate: { store: decorateStore },
    });
  });

  after(async () => {
    try {
      // Every accepted task ends: cancel what is still running, then check.
      for (const { taskId, owner } of accepted) {
        const task = await stack.store.get(taskId, owner, Date.now());
        if (task && !isTerminal(task.status)) await stack.store.cancel(taskId, owner, Date.now());
      }
      for (const { taskId, owner } of accepted) {
        let status: string | undefined;
        await waitFor(
          () => `task ${taskId} to end, still ${status}`,
          async () => {
            const task = await stack.store.get(taskId, owner, Date.now());
            assert.ok(task, `task ${taskId} vanished`);
            status = task.status;
            return isTerminal(task.status);
          },
          15_000,
          100,
        );
      }
      // Nothing sensitive in any log line: no arguments, answers or padding.
      const text = logs.map((line) => JSON.stringify(line)).join('\n');
      assert.doesNotMatch(text, /xxxxxxxxxx|Task id collision|not authorized/);
    } finally {
      await stack?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  return {
    get stack() {
      return stack;
    },
    logs,
    accepted,
    deniedClaims,
    boom,
    callTask,
  };
}
