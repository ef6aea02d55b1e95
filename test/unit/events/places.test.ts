/**
 * Every place a task ends or opens a question for a person publishes what
 * the written row implies, composed as the functions compose it
 * (`functions/<name>/app.ts` and `TaskActions`): the worker (a question, each
 * end), the task actions (a cancel of a queued or waiting task), the
 * dead-letter handler and the sweeper (a wait past its deadline). In memory,
 * with a recording publisher; the same against the emulators and an
 * EventBridge client is test/integration/lifecycle-events.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import * as z from 'zod';
import { createDeadLetterHandler } from '../../../functions/dlq/app.ts';
import { eventBridgePublisher } from '../../../functions/lib/eventbridge.ts';
import { lifecycleEvents } from '../../../functions/lib/events.ts';
import { createSweeperHandler } from '../../../functions/sweeper/app.ts';
import { createWorkerHandler } from '../../../functions/worker/app.ts';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { type Config, ENV, loadConfig } from '../../../shared/config.ts';
import { EventBridgePublisher } from '../../../shared/events/eventbridge.ts';
import { type EventPublisher, MemoryEventPublisher } from '../../../shared/events/publisher.ts';
import { DETAIL_TYPES, type PersonQuestionDetail, type TaskEvent } from '../../../shared/events/task-events.ts';
import type { LogEvent } from '../../../shared/log.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { defineTool, ToolProtocolError } from '../../../shared/runtime/tool.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { newTask, sqsEvent, storePolicy } from '../../support/factories.ts';

const WAIT_MS = 60_000;
const LEASE_MS = 10_000;
const config: Config = loadConfig({
  [ENV.tableName]: 'tasks',
  [ENV.queueUrl]: 'https://sqs.invalid/tasks',
  [ENV.publicUrl]: 'https://tasks.example.com',
  [ENV.maxInputWaitMs]: String(WAIT_MS),
  [ENV.leaseMs]: String(LEASE_MS),
});
const ACTION = 'wire 10,000 EUR to account 42';

const approve = defineTool({
  name: 'approve',
  title: 'Payment approval',
  description: 'Asks a person to approve a payment',
  inputSchema: z.object({ action: z.string() }),
  execution: 'task',
  answeredBy: 'person',
  handler: async ({ action }, ctx) => {
    const answer = await ctx.elicit('approval', {
      message: `Approve: ${action}?`,
      requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] },
    });
    return answer.content?.['approve'] === true ? 'approved' : 'refused';
  },
});
const announcesItsQuestion = defineTool({
  name: 'sign_off',
  description: 'A question whose text is fit to go out',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async (_args, ctx) => {
    await ctx.elicit('sign', {
      message: 'Sign off the release notes?',
      answeredBy: 'person',
      eventMessage: true,
      requestedSchema: { type: 'object', properties: {} },
    });
    return 'signed';
  },
});
const breaks = defineTool({
  name: 'breaks',
  description: 'Fails with a protocol error',
  inputSchema: z.object({}),
  execution: 'task',
  handler: async () => {
    throw new ToolProtocolError(-32602, `cannot ${ACTION}`);
  },
});
const tools = new Map([approve, announcesItsQuestion, breaks].map((tool) => [tool.name, tool]));

function world(publisher: EventPublisher = new MemoryEventPublisher()) {
  const store = new InMemoryTaskStore(storePolicy({ leaseMs: LEASE_MS, maxInputWaitMs: WAIT_MS }));
  const queue = new InMemoryTaskQueue();
  const lines: LogEvent[] = [];
  let clock = Date.parse('2026-12-01T10:00:00Z');
  const now = () => clock;
  const log = (line: LogEvent) => void lines.push(line);
  const deps = { config, store, queue, tools, log, now, eventPublisher: publisher };
  const worker = createWorkerHandler(deps);
  return {
    store,
    lines,
    now,
    advance: (ms: number) => void (clock += ms),
    deadLetter: createDeadLetterHandler(deps),
    sweeper: createSweeperHandler(deps),
    // As the MCP function composes them (functions/mcp/app.ts → the endpoint's task actions).
    actions: new TaskActions({ store, queue, log, now, events: lifecycleEvents(deps)! }),
    async create(tool: string, args: Record<string, unknown> = {}) {
      const { task } = await store.create(newTask({ tool, arguments: args, clientCapabilities: { elicitation: {} }, now: clock }));
      return task.taskId;
    },
    run: (taskId: string, reason: 'start' | 'resume' = 'start') => worker(sqsEvent([JSON.stringify({ taskId, reason })])),
  };
}

const types = (events: readonly TaskEvent[]) => events.map((event) => event.detailType);

describe('lifecycle events from the worker', () => {
  it("a question for a person: the task page's link and the deadline, the title for the message, no arguments", async () => {
    const publisher = new MemoryEventPublisher();
    const w = world(publisher);
    const taskId = await w.create('approve', { action: ACTION });
    await w.run(taskId);
    assert.deepEqual(types(publisher.events), [DETAIL_TYPES.question]);
    const detail = publisher.events[0]!.detail as PersonQuestionDetail;
    assert.equal(detail.taskUrl, `https://tasks.example.com/console/tasks/${taskId}`);
    assert.equal(detail.deadline, new Date(w.now() + WAIT_MS).toISOString());
    assert.deepEqual(detail.questions, [{ key: 'approval', message: 'Payment approval' }]);
    assert.ok(!JSON.stringify(publisher.events).includes('EUR'), 'the arguments stay out (the message quotes them)');

    await w.actions.answer(taskId, 'alice', { approval: { action: 'accept', content: { approve: true } } });
    w.advance(1_000);
    await w.run(taskId, 'resume');
    assert.deepEqual(types(publisher.events), [DETAIL_TYPES.question, DETAIL_TYPES.completed]);
    assert.ok(!JSON.stringify(publisher.events).includes('approved'), 'nor the result');
  });

  it("a tool that lets its question's message go out (eventMessage) has it in the event", async () => {
    const publisher = new MemoryEventPublisher();
    const w = world(publisher);
    await w.run(await w.create('sign_off'));
    assert.deepEqual((publisher.events[0]!.detail as PersonQuestionDetail).questions, [
      { key: 'sign', message: 'Sign off the release notes?' },
    ]);
  });

  it("a failed task: Task Failed with the error's code, not its message", async () => {
    const publisher = new MemoryEventPublisher();
    const w = world(publisher);
    await w.run(await w.create('breaks'));
    assert.deepEqual(types(publisher.events), [DETAIL_TYPES.failed]);
    assert.equal(publisher.events[0]?.detail.status === 'failed' && publisher.events[0].detail.errorCode, -32602);
    assert.ok(!JSON.stringify(publisher.events).includes('EUR'));
  });

  it('a cancel its worker sees: Task Cancelled from the worker', async () => {
    const publisher = new MemoryEventPublisher();
    const w = world(publisher);
    const taskId = await w.create('breaks');
    assert.ok(await w.store.claim(taskId, 'elsewhere', w.now()));
    assert.equal(await w.actions.cancel(taskId, 'alice'), 'requested');
    assert.deepEqual(publisher.events, [], 'a running task is only flagged: its worker ends it');
    await w.store.release(taskId, 'elsewhere', w.now());
    await w.run(taskId);
    assert.deepEqual(types(publisher.events), [DETAIL_TYPES.cancelled]);
  });

  it("a publish that keeps failing leaves the task's outcome and timing as they were, and is counted", async () => {
    const failing: EventPublisher = {
      put: async () => {
        throw Object.assign(new Error('connect ETIMEDOUT'), { name: 'TimeoutError' });
      },
    };
    const w = world(failing);
    const taskId = await w.create('breaks');
    w.advance(2_500);
    const finishedAt = w.now();
    const response = await w.run(taskId);
    assert.deepEqual(response, { batchItemFailures: [] }, 'the message is done: no retry of the task');
    const task = await w.store.get(taskId, 'alice', w.now());
    assert.equal(task?.status, 'failed');
    assert.equal(task?.lastUpdatedAt, finishedAt, 'the outcome was written at the end of the run, before any publish');
    const ended = w.lines.find((line) => line.event === 'task-ended');
    assert.equal(ended?.['TaskDuration'], 2_500);
    const lost = w.lines.filter((line) => line.event === 'events-failed');
    assert.equal(lost.length, 1);
    assert.equal(lost[0]?.['EventsFailed'], 1);
    assert.equal(lost[0]?.['error'], 'TimeoutError');
    assert.ok(w.lines.indexOf(ended!) < w.lines.indexOf(lost[0]!), 'the end is logged first: the event follows the write');
  });
});

describe('lifecycle events from the task actions (the MCP function)', () => {
  it('a cancel of a queued task and of a waiting task: Task Cancelled, after the write', async () => {
    const publisher = new MemoryEventPublisher();
    const w = world(publisher);
    const queued = await w.create('breaks');
    const waiting = await w.create('approve', { action: ACTION });
    await w.run(waiting);
    publisher.events.length = 0;
    assert.equal(await w.actions.cancel(queued, 'alice'), 'cancelled');
    assert.equal(await w.actions.cancel(waiting, 'alice'), 'cancelled');
    assert.deepEqual(types(publisher.events), [DETAIL_TYPES.cancelled, DETAIL_TYPES.cancelled]);
    assert.deepEqual(
      publisher.events.map((event) => [event.detail.taskId, event.detail.tool]),
      [
        [queued, 'breaks'],
        [waiting, 'approve'],
      ],
    );
    assert.equal(await w.actions.cancel(queued, 'alice'), 'terminal');
    assert.equal(publisher.events.length, 2, 'a cancel of an ended task publishes nothing');
  });
});

describe('lifecycle events from the dead-letter handler and the sweeper', () => {
  it('a dead-lettered task: Task Failed from the dead-letter handler', async () => {
    const publisher = new MemoryEventPublisher();
    const w = world(publisher);
    const taskId = await w.create('approve', { action: ACTION });
    await w.deadLetter(sqsEvent([JSON.stringify({ taskId, reason: 'start' })]));
    assert.deepEqual(types(publisher.events), [DETAIL_TYPES.failed]);
    assert.equal(publisher.events[0]?.detail.taskId, taskId);
  });

  it('a wait past its deadline: Task Failed from the sweeper', async () => {
    const publisher = new MemoryEventPublisher();
    const w = world(publisher);
    const taskId = await w.create('approve', { action: ACTION });
    await w.run(taskId);
    w.advance(WAIT_MS);
    assert.deepEqual(await w.sweeper(), { requeued: 0, expired: 1 });
    assert.deepEqual(types(publisher.events), [DETAIL_TYPES.question, DETAIL_TYPES.failed]);
    assert.equal(publisher.events[1]?.detail.status === 'failed' && publisher.events[1].detail.durationMs, WAIT_MS);
  });
});

describe('without a publisher (events off)', () => {
  it('a deployed function without TASKS_EVENT_BUS (-c events=off) gets no publisher, and composes no lifecycle events', () => {
    assert.equal(eventBridgePublisher(config, new EventBridgeClient({ region: 'us-east-1' })), undefined);
    const withBus = loadConfig({ [ENV.tableName]: 't', [ENV.queueUrl]: 'https://sqs.invalid/q', [ENV.eventBusName]: 'bus' });
    assert.ok(eventBridgePublisher(withBus, new EventBridgeClient({ region: 'us-east-1' })) instanceof EventBridgePublisher);
    assert.equal(lifecycleEvents({ log: () => {}, config }), undefined);
    assert.equal(lifecycleEvents({ log: () => {}, config, eventPublisher: undefined }), undefined);
  });
});
