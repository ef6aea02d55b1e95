/**
 * The fallback for clients without tasks (`shared/protocol/fallback.ts`)
 * against the in-memory store: what `task_status`, `task_answer` and
 * `task_cancel` answer and record, and how a question is marked for a person.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import { createEndpoint } from '../../../shared/protocol/endpoint.ts';
import { callFallbackTool, type FallbackDeps } from '../../../shared/protocol/fallback.ts';
import { describeTask } from '../../../shared/protocol/fallback-texts.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { runTool } from '../../../shared/runtime/run.ts';
import { defineTool, type ToolResult } from '../../../shared/runtime/tool.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import type { InputRequest, TaskRecord } from '../../../shared/tasks/model.ts';
import { ANSWERED_BY_META } from '../../../shared/tasks/model.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const NOW = 1_000_000;
const nameQuestion: InputRequest = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name'] },
  },
};
const approval: InputRequest = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Approve?',
    requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] },
    _meta: { [ANSWERED_BY_META]: 'person' },
  },
};

function setup() {
  const store = new InMemoryTaskStore(storePolicy());
  const queue = new InMemoryTaskQueue();
  const now = () => NOW;
  const deps: FallbackDeps = {
    actions: new TaskActions({ store, queue, log: () => {}, now }),
    config: { syncBudgetMs: DEFAULT_SETTINGS.syncBudgetMs },
    now,
    text: { config: { retentionMs: DEFAULT_SETTINGS.retentionMs }, links: new DeploymentLinks('http://127.0.0.1:3000'), signIn: false },
  };
  /** The tasks queued (to resume) so far. */
  const enqueued = () => queue.sent.map((message) => message.taskId);
  const call = (name: string, args: Record<string, unknown>, principal = 'alice') =>
    callFallbackTool(name, args, principal, deps, new AbortController().signal);
  /** A task of alice's waiting on `requests`. */
  const waiting = async (taskId: string, requests: Record<string, InputRequest>) => {
    await store.create(newTask({ taskId, now: NOW }));
    const claimed = await store.claim(taskId, 'w', NOW);
    assert.ok(claimed);
    await store.finish(claimed, 'w', { status: 'input_required', inputRequests: requests }, NOW);
  };
  return { store, enqueued, call, waiting };
}

const textOf = (result: ToolResult) => result.content.map((block) => String(block['text'])).join('\n');

describe('the fallback tools', () => {
  it('task_answer records answers keyed as the questions, as accepted forms, and resumes the task once all are in', async () => {
    const { store, enqueued, call, waiting } = setup();
    await waiting('t1', { name: nameQuestion });
    const reply = await call('task_answer', { taskId: 't1', answers: { name: { name: 'Ada', age: 36 }, other: { x: 1 } } });
    assert.equal(reply.isError, undefined, textOf(reply));
    const { message, ...fields } = reply.structuredContent ?? {};
    assert.deepEqual(fields, {
      taskId: 't1',
      status: 'working',
      accepted: ['name'],
      nextCall: { tool: 'task_status', arguments: { taskId: 't1', waitSeconds: 20 } },
      doNotCallAgain: 'echo',
    });
    assert.equal(message, textOf(reply), 'structuredContent carries the text');
    const task = await store.get('t1', 'alice', NOW);
    assert.equal(task?.status, 'working');
    assert.deepEqual(task?.inputResponses, { name: { action: 'accept', content: { name: 'Ada', age: 36 } } });
    assert.deepEqual(enqueued(), ['t1']);
  });

  it('task_answer refuses an answer that does not fit the schema, recording nothing', async () => {
    const { store, call, waiting } = setup();
    await waiting('t2', { name: nameQuestion });
    for (const [answers, reason] of [
      [{ name: {} }, /missing "name"/],
      [{ name: { name: 'Ada', age: 3.5 } }, /"age" must be an integer/],
      [{ name: 'Ada' }, /must be an object/],
      [{ nope: { name: 'Ada' } }, /None of the keys given is an open question/],
    ] as const) {
      const reply = await call('task_answer', { taskId: 't2', answers });
      assert.equal(reply.isError, true);
      assert.match(textOf(reply), reason);
    }
    assert.equal((await store.get('t2', 'alice', NOW))?.status, 'input_required');
  });

  it("task_answer refuses a question for the person only, naming the person's ways to answer it", async () => {
    const { store, enqueued, call, waiting } = setup();
    await waiting('t3', { approval, name: nameQuestion });
    const reply = await call('task_answer', { taskId: 't3', answers: { approval: { approve: true }, name: { name: 'Ada' } } });
    assert.equal(reply.isError, undefined, 'not shaped as a mistake to fix');
    assert.match(textOf(reply), /not for you to answer/);
    const command = 'node bin/mcp-tasks.js --url http://127.0.0.1:3000/mcp answer t3';
    const page = 'http://127.0.0.1:3000/console/tasks/t3';
    assert.ok(textOf(reply).includes(`\`${command}\``), textOf(reply));
    assert.ok(textOf(reply).indexOf(page) < textOf(reply).indexOf(command), 'the page first, the command second');
    assert.deepEqual(reply.structuredContent?.['person'], {
      answeredBy: 'the user, not you',
      page,
      command,
      commandFrom: "a checkout of this server's repository, after npm ci",
    });
    assert.deepEqual(reply.structuredContent?.['nextCall'], { tool: 'task_status', arguments: { taskId: 't3', waitSeconds: 20 } });
    const task = (await store.get('t3', 'alice', NOW)) as TaskRecord & { status: 'input_required' };
    assert.deepEqual(Object.keys(task.inputRequests).sort(), ['approval', 'name'], 'nothing recorded, not even the other answer');
    assert.deepEqual(enqueued(), []);
    // task_status lists who answers each question.
    const status = await call('task_status', { taskId: 't3' });
    const questions = status.structuredContent?.['questions'] as Record<string, { answeredBy: string }>;
    assert.equal(questions['approval']?.answeredBy, 'person');
    assert.equal(questions['name']?.answeredBy, 'anyone');
  });

  it("docs/connecting.md's table says what task_answer answers for a person-only question: no isError, its keys in refused", async () => {
    const { call, waiting } = setup();
    await waiting('t5', { approval });
    const reply = await call('task_answer', { taskId: 't5', answers: { approval: { approve: true } } });
    assert.equal(reply.isError, undefined);
    assert.deepEqual(reply.structuredContent?.['refused'], ['approval']);
    const docs = await readFile(new URL('../../../docs/connecting.md', import.meta.url), 'utf8');
    const row = docs.split('\n').find((line) => line.startsWith('| `task_answer` |')) ?? '';
    const personPart = row.slice(row.indexOf('a person-only question'));
    assert.match(personPart, /^a person-only question: a plain result \(not `isError`\) with `refused`/, row);
    assert.doesNotMatch(row.slice(0, row.indexOf('a person-only question')), /person/, 'the isError cases name no person-only question');
  });

  it("an unknown id and another principal's id read alike, for every fallback tool", async () => {
    const { call, waiting } = setup();
    await waiting('t4', { name: nameQuestion });
    for (const [name, args] of [
      ['task_status', {}],
      ['task_answer', { answers: { name: { name: 'x' } } }],
      ['task_cancel', {}],
    ] as const) {
      const foreign = await call(name, { taskId: 't4', ...args }, 'mallory');
      const unknown = await call(name, { taskId: 'zz', ...args }, 'mallory');
      assert.equal(foreign.isError, true, name);
      assert.equal(textOf(foreign).replace('t4', '<id>'), textOf(unknown).replace('zz', '<id>'), name);
    }
  });

  it('task_cancel ends a waiting task at once; on an ended task it says so', async () => {
    const { store, call, waiting } = setup();
    await waiting('t5', { name: nameQuestion });
    const first = await call('task_cancel', { taskId: 't5' });
    assert.equal(first.structuredContent?.['status'], 'cancelled');
    assert.equal((await store.get('t5', 'alice', NOW))?.status, 'cancelled');
    const again = await call('task_cancel', { taskId: 't5' });
    assert.match(textOf(again), /already ended \(cancelled\)/);
  });

  it('task_status right after task_cancel of a running task says a cancel was requested and what happens next', async () => {
    const { store, call } = setup();
    await store.create(newTask({ taskId: 't6', now: NOW }));
    assert.ok(await store.claim('t6', 'w', NOW), 'a worker runs it');
    const cancelled = await call('task_cancel', { taskId: 't6' });
    assert.equal(cancelled.structuredContent?.['cancelRequested'], true);
    const status = await call('task_status', { taskId: 't6' });
    assert.match(textOf(status), /asked to cancel and is stopping: it ends cancelled at its next check/);
    assert.equal(status.structuredContent?.['cancelRequested'], true);
    assert.doesNotMatch(textOf(status), /still working/);
  });

  it('bad arguments are an isError text naming the argument', async () => {
    const { call } = setup();
    const reply = await call('task_status', { waitSeconds: 5 });
    assert.equal(reply.isError, true);
    assert.match(textOf(reply), /Invalid arguments for task_status: taskId/);
  });
});

describe('describeTask', () => {
  const base = { ...newTask({ taskId: 't', tool: 'slow' }), createdAt: NOW, lastUpdatedAt: NOW, issuedKeys: [], cancelRequested: false };
  const context = { config: { retentionMs: 3_600_000 }, links: new DeploymentLinks(undefined), signIn: false };
  const record = (fields: Record<string, unknown>) => ({ ...base, attempts: 0, version: 1, ...fields }) as unknown as TaskRecord;

  it("answers a completed task's result exactly as the tool returned it", () => {
    const result = { content: [{ type: 'text', text: 'done' }], structuredContent: { n: 1 }, isError: true };
    assert.deepEqual(describeTask(record({ status: 'completed', result: { ...result, resultType: 'complete' } }), context), result);
  });

  it('names a working task, tells the model not to call the tool again and how to follow it, with its retention', () => {
    const reply = describeTask(record({ status: 'working', statusMessage: 'half way' }), context, { firstAnswer: true });
    assert.deepEqual(reply.structuredContent, {
      taskId: 't',
      status: 'working',
      statusMessage: 'half way',
      message: textOf(reply),
      nextCall: { tool: 'task_status', arguments: { taskId: 't', waitSeconds: 20 } },
      doNotCallAgain: 'slow',
    });
    assert.match(textOf(reply), /background task t/);
    assert.match(textOf(reply), /Do not call slow again/);
    assert.match(textOf(reply), /task_status with \{"taskId": "t", "waitSeconds": 20\}/);
    assert.match(textOf(reply), /readable for 1 hour/);
  });

  it("a failed task is an isError text with the task's error", () => {
    const reply = describeTask(record({ status: 'failed', error: { code: -32603, message: 'boom' } }), context);
    assert.equal(reply.isError, true);
    assert.deepEqual(reply.structuredContent?.['error'], { code: -32603, message: 'boom' });
  });
});

describe('questions for a person', () => {
  const asking = (answeredBy: 'person' | undefined, toolLevel: boolean) =>
    defineTool({
      name: 'ask',
      description: 'asks',
      inputSchema: z.object({}),
      execution: 'task',
      ...(toolLevel ? { answeredBy: 'person' as const } : {}),
      handler: async (_args, ctx) => {
        await ctx.elicit('q', {
          message: 'ok?',
          requestedSchema: { type: 'object', properties: {} },
          ...(answeredBy ? { answeredBy } : {}),
        });
        return 'done';
      },
    });
  const run = async (answeredBy: 'person' | undefined, toolLevel: boolean) => {
    const outcome = await runTool(
      asking(answeredBy, toolLevel),
      {},
      {
        taskId: 't',
        clientCapabilities: { elicitation: {} },
        answers: {},
        cancel: new AbortController().signal,
        progress: async () => {},
      },
    );
    assert.equal(outcome.kind, 'input');
    return outcome.kind === 'input' ? outcome.inputRequests['q']! : undefined;
  };

  it('are marked in the request params _meta, by the question or by the tool; other questions are not', async () => {
    assert.deepEqual((await run('person', false))?.params?.['_meta'], { [ANSWERED_BY_META]: 'person' });
    assert.deepEqual((await run(undefined, true))?.params?.['_meta'], { [ANSWERED_BY_META]: 'person' });
    const plain = await run(undefined, false);
    assert.equal(plain?.params?.['_meta'], undefined);
    assert.equal(plain?.params?.['answeredBy'], undefined, 'the option itself is not sent');
  });
});

describe('the endpoint', () => {
  const named = (name: string) =>
    defineTool({ name, description: 'x', inputSchema: z.object({}), execution: 'sync', handler: async () => 'x' });
  const endpoint = (clientFallback: boolean | undefined) =>
    createEndpoint({
      store: new InMemoryTaskStore(storePolicy()),
      queue: new InMemoryTaskQueue(),
      tools: new Map([['task_status', named('task_status')]]),
      config: DEFAULT_SETTINGS,
      log: () => {},
      stackSecret: async () => new Uint8Array(32),
      originPolicy: { kind: 'loopback' },
      ...(clientFallback === undefined ? {} : { clientFallback }),
    });

  it('refuses to start with a tool named like a fallback tool while the fallback is on, and allows it when off', () => {
    assert.throws(() => endpoint(undefined), /Tool names reserved by the client fallback: task_status/);
    assert.doesNotThrow(() => endpoint(false));
  });
});
