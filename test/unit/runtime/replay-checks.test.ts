/**
 * The replay checks' failures (`shared/runtime/replay-checks.ts`): each one's
 * JSON-RPC error is stored on failed task rows and returned to clients, so
 * its code, message and `data` (keys in order) are pinned here byte for byte,
 * as is the worker's `replay-failed` line.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { TasksError } from '../../../shared/errors.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import {
  divergenceAt,
  fingerprintOf,
  indexRecorded,
  keyReuse,
  REPLAY_WIRE_REASONS,
  ReplayError,
  versionChange,
} from '../../../shared/runtime/replay-checks.ts';
import { defineTool } from '../../../shared/runtime/tool.ts';
import { processTaskMessage } from '../../../shared/runtime/worker.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const ORDER = "The handler's steps, sleeps and questions must come in the same order on every run";

describe('ReplayError', () => {
  it('is a TasksError named ReplayError, its reason typed', () => {
    const error = ReplayError.keyReused('k');
    assert.ok(error instanceof TasksError);
    assert.equal(error.name, 'ReplayError');
    assert.equal(error.reason, 'key-reused');
    assert.equal(REPLAY_WIRE_REASONS[error.reason], 'input-key-reused');
  });

  it('serialises a divergence at a step, sleep or question as stored rows hold it', () => {
    assert.equal(
      JSON.stringify(ReplayError.divergence('step', 'b', 1, 'it was recorded as call #2')),
      JSON.stringify({
        code: -32603,
        message: `Replay diverged at step "b" (call #1): it was recorded as call #2. ${ORDER}`,
        data: { reason: 'replay-divergence', step: 'b', position: 1 },
      }),
    );
    assert.equal(
      JSON.stringify(ReplayError.divergence('sleep', 'sleep#1', 3, 'x')),
      JSON.stringify({
        code: -32603,
        message: `Replay diverged at sleep "sleep#1" (call #3): x. ${ORDER}`,
        data: { reason: 'replay-divergence', step: 'sleep#1', position: 3 },
      }),
    );
    assert.equal(
      JSON.stringify(ReplayError.divergence('question', 'ok', 2, 'x')),
      JSON.stringify({
        code: -32603,
        message: `Replay diverged at question "ok" (call #2): x. ${ORDER}`,
        data: { reason: 'replay-divergence', key: 'ok', position: 2 },
      }),
    );
  });

  it('serialises a reused key and a changed tool version as stored rows hold them', () => {
    assert.equal(
      JSON.stringify(ReplayError.keyReused('confirm')),
      JSON.stringify({
        code: -32603,
        message: 'Input key "confirm" was used for a different question (another method or requested schema): one key, one question',
        data: { reason: 'input-key-reused', key: 'confirm' },
      }),
    );
    const message = (to: string) =>
      `Tool "t" changed from version 1 to ${to} while this task was in flight; its recorded work is not replayed by other code`;
    assert.equal(
      JSON.stringify(ReplayError.toolVersion('t', '1', '2')),
      JSON.stringify({
        code: -32603,
        message: message('2'),
        data: { reason: 'tool-version-changed', recordedVersion: '1', currentVersion: '2' },
      }),
    );
    assert.equal(
      JSON.stringify(ReplayError.toolVersion('t', '1', undefined)),
      JSON.stringify({
        code: -32603,
        message: message('(none)'),
        data: { reason: 'tool-version-changed', recordedVersion: '1', currentVersion: null },
      }),
    );
  });
});

describe('replay checks', () => {
  it('finds a divergence against what is recorded at the position, or where the call was recorded', async () => {
    const recorded = await indexRecorded(
      {
        entries: async () =>
          new Map<string, { position?: number }>([
            ['a', { position: 1 }],
            ['sleep#1', { position: 2 }],
            ['old', {}],
          ]),
      },
      { ok: { position: 3, fingerprint: 'f' } },
    );
    assert.equal(recorded.lastPosition, 3);
    assert.deepEqual([...recorded.unpositioned], ['old']);
    assert.equal(divergenceAt(recorded, 'step', 'a', 1, 1), undefined);
    assert.equal(divergenceAt(recorded, 'step', 'new', 4, undefined), undefined);
    assert.match(divergenceAt(recorded, 'step', 'b', 2, undefined)?.message ?? '', /the journal has a sleep \("sleep#1"\) there/);
    assert.match(divergenceAt(recorded, 'step', 'ok', 3, undefined)?.message ?? '', /the journal has the question "ok" there/);
    assert.match(divergenceAt(recorded, 'step', 'a', 5, 1)?.message ?? '', /it was recorded as call #1/);
  });

  it('tells a reused key and a changed version, and lets the same ones pass', () => {
    const asked = { position: 1, fingerprint: fingerprintOf({ method: 'roots/list', params: {} }) };
    assert.equal(keyReuse('k', asked.fingerprint, asked), undefined);
    assert.equal(keyReuse('k', 'other', undefined), undefined);
    assert.equal(keyReuse('k', 'other', asked)?.reason, 'key-reused');
    assert.equal(versionChange('t', undefined, '2'), undefined);
    assert.equal(versionChange('t', '2', '2'), undefined);
    assert.equal(versionChange('t', '1', '2')?.reason, 'tool-version');
  });

  it('fingerprints a question by its method and requested schema, whatever the key order', () => {
    const ask = (schema: object) => ({
      method: 'elicitation/create' as const,
      params: { mode: 'form', message: 'm', requestedSchema: schema },
    });
    assert.equal(fingerprintOf(ask({ type: 'object', properties: {} })), fingerprintOf(ask({ properties: {}, type: 'object' })));
    assert.notEqual(fingerprintOf(ask({ type: 'object' })), fingerprintOf(ask({ type: 'array' })));
  });
});

describe('a replay failure in the worker', () => {
  it('fails the task with the wire error and logs replay-failed with the wire reason', async () => {
    const ran: string[] = [];
    const stepped = defineTool({
      name: 'stepped',
      description: '',
      inputSchema: z.object({}),
      execution: 'task',
      handler: async (_a, ctx) => {
        for (const name of ['s1', 's2']) await ctx.step(name, async () => ran.push(name));
        return 'done';
      },
    });
    const store = new InMemoryTaskStore(storePolicy());
    const now = Date.now();
    const { task: created } = await store.create(newTask({ tool: stepped.name, now }));
    // An earlier run recorded s2 as its first call.
    await store.saveStep(created.taskId, { name: 's2', value: 1, now: now, position: 1 });
    const events: Array<Record<string, unknown>> = [];
    const deps = {
      store,
      queue: new InMemoryTaskQueue(),
      tools: new Map([[stepped.name, stepped]]),
      config: DEFAULT_SETTINGS,
      log: (event: Record<string, unknown>) => void events.push(event),
    };
    assert.equal(await processTaskMessage({ taskId: created.taskId, reason: 'continue' }, deps), 'done');
    const task = await store.get(created.taskId, 'alice', Date.now());
    assert.deepEqual(task?.status === 'failed' ? task.error : task?.status, {
      code: -32603,
      message: `Replay diverged at step "s1" (call #1): the journal has step "s2" there. ${ORDER}`,
      data: { reason: 'replay-divergence', step: 's1', position: 1 },
    });
    assert.deepEqual(
      events.filter((event) => event['event'] === 'replay-failed'),
      [{ event: 'replay-failed', taskId: created.taskId, tool: 'stepped', reason: 'replay-divergence' }],
    );
    assert.deepEqual(ran, [], 'the diverging step did not run');
  });
});
