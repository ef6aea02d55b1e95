/**
 * Clients that do not declare the tasks extension, end to end against the
 * local stack as `npm start` runs it (default settings, `TASKS_TOOLSET=all`):
 *
 * - the MCP TypeScript SDK v1 client (1.32.x, a 2025-11-25 session) after
 *   `listTools()`, with plain `callTool` (no experimental tasks API);
 * - a plain 2026-07-28 HTTP client declaring `roots` and `elicitation` but not
 *   the extension (as Claude Code does in `-p` mode).
 *
 * Each drives a 45 s `optional` tool, `multi_input` answered through
 * `task_answer`, `approval_gate` (the model's `task_answer` refused, the
 * person's `mcp-tasks answer` accepted) and a `task_cancel`, every call
 * answered within 25 s. Beside them: a step-structured job crossing the
 * budget runs each step once, declaring requests never see the fallback
 * tools, non-declaring `tasks/*` still answer `-32021`, another principal's
 * id reads as unknown, and `TASKS_CLIENT_FALLBACK=off` restores `-32021`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { EFFECTS_DIR_ENV, readEffects } from '../../functions/fixtures/durability/effects.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { errorOf, mcpRequestEvent, resultOf, rpc, TASKS_CAPABILITIES, throughHandler } from '../support/wire.ts';

const BIN = fileURLToPath(new URL('../../bin/mcp-tasks.js', import.meta.url));
/** Every answer a client gets, the first of a call included. */
const FIRST_ANSWER_MS = 25_000;
/** What Claude Code declares in `-p` mode: no tasks extension. */
const NON_DECLARING = { roots: {}, elicitation: {} };
const FALLBACK_TOOLS = ['task_status', 'task_answer', 'task_cancel'];

interface ToolReply {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** A client that does not declare the extension, as the tests drive it. */
interface Caller {
  listTools(): Promise<Array<{ name: string; execution?: { taskSupport?: string | undefined } | undefined }>>;
  callTool(name: string, args: Record<string, unknown>): Promise<ToolReply>;
}

function textOf(reply: ToolReply): string {
  return (reply.content ?? []).map((block) => block.text ?? '').join('\n');
}

let stack: LocalStackProcess;

before(async () => {
  // The settings `npm start` uses.
  stack = await startLocalStackProcess({ env: { TASKS_TOOLSET: 'all' } });
});

after(async () => {
  await stack?.stop();
});

function explain(reply: unknown): string {
  return `${JSON.stringify(reply)}\nstack log (tail):\n${stack.output().split('\n').slice(-15).join('\n')}`;
}

/** Log lines of the stack for one task and one event. */
function logged(event: string, taskId: string): number {
  return stack
    .output()
    .split('\n')
    .filter((line) => line.includes(`"event":"${event}"`) && line.includes(taskId)).length;
}

/** Calls a tool and checks the answer came within {@link FIRST_ANSWER_MS}. */
async function timed(caller: Caller, name: string, args: Record<string, unknown>): Promise<ToolReply> {
  const started = Date.now();
  const reply = await caller.callTool(name, args);
  const took = Date.now() - started;
  assert.ok(took < FIRST_ANSWER_MS, `${name} answered after ${took} ms`);
  return reply;
}

/** The fallback's answer naming a task: status and id in `structuredContent`, no task fields at the top. */
function namedTask(reply: ToolReply, status: string): string {
  assert.equal(reply.structuredContent?.['status'], status, explain(reply));
  const taskId = reply.structuredContent?.['taskId'];
  assert.equal(typeof taskId, 'string');
  for (const key of ['taskId', 'status', 'task', 'ttlMs', 'pollIntervalMs']) assert.ok(!(key in reply), `no top-level ${key}`);
  assert.match(textOf(reply), new RegExp(taskId as string));
  return taskId as string;
}

/** `task_status` (waiting up to 20 s each time) until the task is no longer working. */
async function follow(caller: Caller, taskId: string): Promise<ToolReply> {
  for (let round = 0; round < 10; round++) {
    const reply = await timed(caller, 'task_status', { taskId, waitSeconds: 20 });
    if (reply.structuredContent?.['status'] !== 'working') return reply;
    assert.match(textOf(reply), /still working/);
  }
  assert.fail(`task ${taskId} still working after 10 task_status calls`);
}

/** `mcp-tasks answer`, as the person runs it. */
function personAnswers(taskId: string, answer: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'answer', taskId, '--answer', answer],
      { env: { ...process.env, MCP_TASKS_URL: stack.url }, timeout: 60_000 },
      (error, _stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stderr }),
    ).stdin?.end();
  });
}

function flows(label: string, connect: () => Promise<Caller & { close(): Promise<void> }>) {
  describe(label, () => {
    let caller: Caller & { close(): Promise<void> };
    before(async () => {
      caller = await connect();
    });
    after(async () => {
      await caller?.close();
    });

    it('lists the fallback tools beside the catalogue', async () => {
      const names = (await caller.listTools()).map((tool) => tool.name);
      for (const name of [...FALLBACK_TOOLS, 'slow_compute', 'multi_input', 'approval_gate']) assert.ok(names.includes(name), name);
    });

    it('a 45 s optional tool: named as a task within the budget, then its own result through task_status; it ran once', {
      timeout: 120_000,
    }, async () => {
      const first = await timed(caller, 'slow_compute', { seconds: 45, label: label.split(' ')[0] });
      const taskId = namedTask(first, 'working');
      assert.match(textOf(first), /Do not call slow_compute again/);
      assert.match(textOf(first), /task_status/);
      const done = await follow(caller, taskId);
      assert.deepEqual(done.content, [{ type: 'text', text: `Computed ${label.split(' ')[0]} after 45s` }], explain(done));
      assert.equal(done.isError, undefined);
      assert.equal(logged('task-created', taskId), 1);
      assert.equal(logged('task-started', taskId), 1);
      assert.equal(logged('ran', taskId), 1, 'one run of the handler, by the worker only');
    });

    it('multi_input: its questions come back at once, task_answer answers them, task_status gives the result', {
      timeout: 60_000,
    }, async () => {
      const first = await timed(caller, 'multi_input', {});
      const taskId = namedTask(first, 'input_required');
      const questions = first.structuredContent?.['questions'] as Record<string, { requestedSchema: unknown; answeredBy: string }>;
      assert.deepEqual(Object.keys(questions).sort(), ['color', 'name']);
      assert.deepEqual(questions['name']?.requestedSchema, {
        type: 'object',
        properties: { name: { type: 'string' } },
        required: ['name'],
      });
      // A wrong answer is refused with a reason, and nothing is recorded.
      const wrong = await timed(caller, 'task_answer', { taskId, answers: { name: { name: 42 } } });
      assert.equal(wrong.isError, true);
      assert.match(textOf(wrong), /"name" must be a string/);
      const answered = await timed(caller, 'task_answer', { taskId, answers: { name: { name: 'Ada' }, color: { color: 'teal' } } });
      assert.deepEqual(answered.structuredContent?.['accepted'], ['name', 'color'], explain(answered));
      const done = await follow(caller, taskId);
      assert.equal(textOf(done), 'name=Ada, color=teal', explain(done));
    });

    it("approval_gate: the model's task_answer is refused, the person's mcp-tasks answer is accepted", { timeout: 90_000 }, async () => {
      const first = await timed(caller, 'approval_gate', { action: `deploy ${label}` });
      const taskId = namedTask(first, 'input_required');
      const questions = first.structuredContent?.['questions'] as Record<string, { answeredBy: string }>;
      assert.equal(questions['approval']?.answeredBy, 'person');
      assert.match(textOf(first), new RegExp(`mcp-tasks\\.js --url ${stack.url} answer ${taskId}`));

      const refused = await timed(caller, 'task_answer', { taskId, answers: { approval: { approve: true } } });
      assert.equal(refused.isError, undefined, 'a refusal to hand to the user, not a mistake to fix');
      assert.match(textOf(refused), /not for you to answer/);
      assert.match(textOf(refused), new RegExp(`mcp-tasks\\.js --url ${stack.url} answer ${taskId}`));
      const still = await timed(caller, 'task_status', { taskId });
      assert.equal(still.structuredContent?.['status'], 'input_required', 'the refused answer changed nothing');

      const person = await personAnswers(taskId, 'approval.approve=true');
      assert.equal(person.code, 0, person.stderr);
      const done = await follow(caller, taskId);
      assert.equal(textOf(done), `Approved and done: deploy ${label}`, explain(done));
      assert.equal(done.structuredContent?.['approved'], true, explain(done));
    });

    it('task_cancel stops a running task, which ends cancelled', { timeout: 90_000 }, async () => {
      const first = await timed(caller, 'slow_compute', { seconds: 600 });
      const taskId = namedTask(first, 'working');
      const cancelled = await timed(caller, 'task_cancel', { taskId });
      assert.match(textOf(cancelled), /cancel/i);
      const end = await follow(caller, taskId);
      assert.equal(end.structuredContent?.['status'], 'cancelled', explain(end));
      assert.equal(logged('ran', taskId), 1);
    });

    it('an unknown id gets a plain isError text', async () => {
      const reply = await timed(caller, 'task_status', { taskId: 'no-such-task' });
      assert.equal(reply.isError, true);
      assert.match(textOf(reply), /No task "no-such-task" is known to you/);
    });
  });
}

flows('SDK v1 client (2025-11-25), plain callTool after listTools', async () => {
  const client = new Client({ name: 'e2e-sdk-v1-no-tasks', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.url)));
  let listed = false;
  return {
    async listTools() {
      const { tools } = await client.listTools();
      listed = true;
      // Served by the fallback: optional, so the client sends a plain call.
      const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
      assert.equal(support['approval_gate'], 'optional');
      assert.equal(support['multi_input'], 'optional');
      assert.equal(support['failing_job'], 'required', 'opted out');
      assert.equal(support['task_status'], 'forbidden');
      return tools;
    },
    async callTool(name, args) {
      assert.ok(listed, 'listTools() first, as the SDK v1 client needs for taskSupport');
      return (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as ToolReply;
    },
    close: () => client.close(),
  };
});

flows('plain 2026-07-28 HTTP client without the extension', async () => ({
  async listTools() {
    const listed = resultOf(await rpc(stack.url, 'tools/list', {}, { capabilities: NON_DECLARING }));
    return listed['tools'] as Array<{ name: string }>;
  },
  async callTool(name, args) {
    const response = await rpc(stack.url, 'tools/call', { name, arguments: args }, { capabilities: NON_DECLARING, timeoutMs: 30_000 });
    const result = resultOf(response);
    assert.equal(result['resultType'], 'complete', response.text);
    return result as ToolReply;
  },
  close: async () => {},
}));

describe('declaring requests and the task methods', () => {
  it('a request declaring the extension never sees the fallback tools, and calling one by name is an unknown tool', async () => {
    const listed = resultOf(await rpc(stack.url, 'tools/list', {}, { capabilities: TASKS_CAPABILITIES }));
    const names = (listed['tools'] as Array<{ name: string }>).map((tool) => tool.name);
    for (const name of FALLBACK_TOOLS) assert.ok(!names.includes(name), name);
    const error = errorOf(
      await rpc(stack.url, 'tools/call', { name: 'task_status', arguments: { taskId: 'x' } }, { capabilities: TASKS_CAPABILITIES }),
    );
    assert.equal(error.code, -32602);
    assert.match(error.message, /Unknown tool: task_status/);
    // …and it still gets a CreateTaskResult for a task tool.
    const created = resultOf(await rpc(stack.url, 'tools/call', { name: 'multi_input', arguments: {} }));
    assert.equal(created['resultType'], 'task');
    await rpc(stack.url, 'tasks/cancel', { taskId: created['taskId'] });
  });

  it('tasks/get, tasks/update and tasks/cancel without the extension still answer -32021, also for a fallback task', async () => {
    const first = resultOf(await rpc(stack.url, 'tools/call', { name: 'multi_input', arguments: {} }, { capabilities: NON_DECLARING }));
    const taskId = (first['structuredContent'] as { taskId: string }).taskId;
    for (const [method, params] of [
      ['tasks/get', { taskId }],
      ['tasks/update', { taskId, inputResponses: { name: { action: 'accept', content: { name: 'x' } } } }],
      ['tasks/cancel', { taskId }],
    ] as const) {
      const error = errorOf(await rpc(stack.url, method, params, { capabilities: NON_DECLARING }));
      assert.equal(error.code, -32021, method);
    }
    // A declaring request follows the same task with the task methods.
    const got = resultOf(await rpc(stack.url, 'tasks/get', { taskId }));
    assert.equal(got['status'], 'input_required');
    await rpc(stack.url, 'tasks/cancel', { taskId });
  });

  it('an opted-out task tool (failing_job) still answers -32021 to a client without the extension', async () => {
    const error = errorOf(await rpc(stack.url, 'tools/call', { name: 'failing_job', arguments: {} }, { capabilities: NON_DECLARING }));
    assert.equal(error.code, -32021);
  });
});

describe('in process: steps across the budget, principals, strict mode', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-fallback-'));
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  async function withStack<T>(name: string, env: Record<string, string>, run: (local: LocalStack) => Promise<T>): Promise<T> {
    const local = await startLocalStack({ port: 0, dataDir: join(dataDir, name), log: () => {}, env: { ...process.env, ...env } });
    try {
      return await run(local);
    } finally {
      await local.close();
    }
  }

  it('a step-structured job crossing the budget runs every step once; another principal reads its id as unknown', {
    timeout: 120_000,
  }, async () => {
    const effects = join(dataDir, 'effects');
    const previous = process.env[EFFECTS_DIR_ENV];
    process.env[EFFECTS_DIR_ENV] = effects;
    try {
      // `test` is `all` plus the durability fixtures, which record each step's side effect.
      await withStack('steps', { TASKS_TOOLSET: 'test' }, async (local) => {
        const mcp = throughHandler(local.handlers.mcp);
        const label = `fallback-${Date.now()}`;
        const started = Date.now();
        const first = resultOf(
          await rpc(
            mcp,
            'tools/call',
            { name: 'step_sequence', arguments: { label, steps: 6, stepMs: 5_000 } },
            {
              capabilities: NON_DECLARING,
              timeoutMs: 30_000,
            },
          ),
        );
        assert.ok(Date.now() - started < FIRST_ANSWER_MS);
        const { taskId, status } = first['structuredContent'] as { taskId: string; status: string };
        assert.equal(status, 'working');

        // Another principal (a JWT authorizer's subject) cannot tell the id from an unknown one.
        for (const [name, args] of [
          ['task_status', { taskId }],
          ['task_answer', { taskId, answers: { x: {} } }],
          ['task_cancel', { taskId }],
        ] as const) {
          const theirs = await otherPrincipal(local, name, args);
          const unknown = await otherPrincipal(local, name, { ...args, taskId: 'no-such-task' });
          assert.equal(theirs.isError, true, name);
          assert.equal(textOf(theirs).replace(taskId, '<id>'), textOf(unknown).replace('no-such-task', '<id>'), name);
        }

        let done: Record<string, unknown> | undefined;
        for (let round = 0; round < 5 && !done; round++) {
          const reply = resultOf(
            await rpc(
              mcp,
              'tools/call',
              { name: 'task_status', arguments: { taskId, waitSeconds: 20 } },
              {
                capabilities: NON_DECLARING,
                timeoutMs: 30_000,
              },
            ),
          );
          if ((reply['structuredContent'] as { status?: string } | undefined)?.['status'] !== 'working') done = reply;
        }
        assert.deepEqual(done?.['structuredContent'], { sum: 21 }, JSON.stringify(done));
        assert.deepEqual(readEffects(label, effects), ['step-1', 'step-2', 'step-3', 'step-4', 'step-5', 'step-6']);
      });
    } finally {
      if (previous === undefined) delete process.env[EFFECTS_DIR_ENV];
      else process.env[EFFECTS_DIR_ENV] = previous;
    }
  });

  it('TASKS_CLIENT_FALLBACK=off restores -32021 for task tools and lists no fallback tools', { timeout: 60_000 }, async () => {
    await withStack('strict', { TASKS_TOOLSET: 'all', TASKS_CLIENT_FALLBACK: 'off' }, async (local) => {
      const mcp = throughHandler(local.handlers.mcp);
      for (const name of ['multi_input', 'approval_gate', 'failing_job']) {
        const error = errorOf(await rpc(mcp, 'tools/call', { name, arguments: { action: 'x' } }, { capabilities: NON_DECLARING }));
        assert.equal(error.code, -32021, name);
      }
      const listed = resultOf(await rpc(mcp, 'tools/list', {}, { capabilities: NON_DECLARING }));
      const names = (listed['tools'] as Array<{ name: string }>).map((tool) => tool.name);
      for (const name of FALLBACK_TOOLS) assert.ok(!names.includes(name), name);
      assert.equal(
        errorOf(await rpc(mcp, 'tools/call', { name: 'task_status', arguments: { taskId: 'x' } }, { capabilities: NON_DECLARING })).code,
        -32602,
      );
      // An optional tool runs inside the request, as before.
      const sync = resultOf(
        await rpc(mcp, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'strict' } }, { capabilities: NON_DECLARING }),
      );
      assert.deepEqual(sync['content'], [{ type: 'text', text: 'Computed strict after 1s' }]);
    });
  });
});

/** A fallback tool called as another principal (a JWT authorizer's subject), as its `CallToolResult`. */
async function otherPrincipal(local: LocalStack, name: string, args: Record<string, unknown>): Promise<ToolReply> {
  const result = await local.handlers.mcp(
    mcpRequestEvent('tools/call', { name, arguments: args }, { capabilities: {}, principal: 'mallory' }),
  );
  const body = JSON.parse(typeof result === 'string' ? result : (result.body ?? '{}')) as { result?: ToolReply; error?: unknown };
  assert.ok(body.result, JSON.stringify(body));
  return body.result;
}
