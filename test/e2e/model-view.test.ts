/**
 * What a model reads, on `npm start` defaults (the product's tools): two
 * clients without tasks, each handing its model one view of a tool result —
 *
 * - the MCP SDK v1 client (a 2025-11-25 session) whose host gives the model
 *   `structuredContent` whenever a result carries it, and the text only on
 *   `isError` (as Claude Code `-p`, Codex and Mastra do);
 * - a plain 2026-07-28 HTTP client whose host gives the model the text.
 *
 * Each runs the 45 s demo and `approval_gate`, and every view must say the
 * follow-up call, that the tool must not be called again, and for the
 * person's question who answers and where (a command that works as printed,
 * run here exactly so). A repeated identical call joins the running task (the
 * handler runs once), and a client that gives up (`notifications/cancelled`)
 * leaves the work running for its retry to join.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { resultOf, rpc } from '../support/wire.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What Claude Code declares in `-p` mode: no tasks extension. */
const NON_DECLARING = { roots: {}, elicitation: {} };

interface ToolReply {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A client without tasks, and what its host hands the model of a result. */
interface ModelClient {
  call(name: string, args: Record<string, unknown>, options?: { timeoutMs?: number }): Promise<ToolReply>;
  view(reply: ToolReply): string;
  close(): Promise<void>;
}

const textOf = (reply: ToolReply) => (reply.content ?? []).map((block) => block.text ?? '').join('\n');

/** Claude Code, Codex, Mastra: the structured content when there is one (the text only for an error). */
const structuredView = (reply: ToolReply) =>
  !reply.isError && reply.structuredContent !== undefined ? JSON.stringify(reply.structuredContent) : textOf(reply);

let stack: LocalStackProcess;
before(async () => {
  stack = await startLocalStackProcess(); // npm start's defaults
});
after(async () => {
  await stack?.stop();
});

const logged = (event: string, taskId: string) =>
  stack
    .output()
    .split('\n')
    .filter((line) => line.includes(`"event":"${event}"`) && line.includes(taskId)).length;

async function sdkClient(): Promise<ModelClient> {
  const client = new Client({ name: 'structured-host', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.url)));
  await client.listTools();
  return {
    call: async (name, args, options) =>
      (await client.callTool({ name, arguments: args }, undefined, { timeout: options?.timeoutMs ?? 60_000 })) as ToolReply,
    view: structuredView,
    close: () => client.close(),
  };
}

function httpClient(): ModelClient {
  return {
    call: async (name, args) => {
      const response = await rpc(stack.url, 'tools/call', { name, arguments: args }, { capabilities: NON_DECLARING, timeoutMs: 40_000 });
      return resultOf(response) as ToolReply;
    },
    view: textOf,
    close: async () => {},
  };
}

/** `task_status` with `waitSeconds` until the task is no longer working; every view on the way names the next call. */
async function follow(client: ModelClient, taskId: string): Promise<ToolReply> {
  for (let round = 0; round < 10; round++) {
    const reply = await client.call('task_status', { taskId, waitSeconds: 20 });
    if (reply.structuredContent?.['status'] !== 'working') return reply;
    assert.match(client.view(reply), new RegExp(`task_status[\\s\\S]*${taskId}`), 'a working view names the follow-up call');
  }
  assert.fail(`task ${taskId} still working after 10 task_status calls`);
}

/** Runs a command as printed (split on spaces: it has no quotes), from a checkout of the repository. */
function runPrinted(command: string, extra: string[]): Promise<{ code: number; stderr: string }> {
  const [program, ...args] = command.split(' ');
  assert.equal(program, 'node', command);
  return new Promise((resolve) => {
    execFile(process.execPath, [...args, ...extra], { cwd: ROOT, timeout: 60_000 }, (error, _stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stderr }),
    ).stdin?.end();
  });
}

for (const [label, connect] of [
  ['a host that hands its model structuredContent (SDK v1 client)', sdkClient],
  ['a host that hands its model the text (2026-07-28 HTTP client)', async () => httpClient()],
] as const) {
  describe(label, { concurrency: true }, () => {
    let client: ModelClient;
    before(async () => {
      client = await connect();
    });
    after(async () => client?.close());

    it('a 45 s computation: the view says what to call next and not to call the tool again; a repeat joins; it ran once', {
      timeout: 180_000,
    }, async () => {
      const args = { seconds: 45, label: `view-${label.length}-${Math.random().toString(36).slice(2, 8)}` };
      const first = await client.call('long_computation', args);
      const taskId = String(first.structuredContent?.['taskId']);
      assert.equal(first.structuredContent?.['status'], 'working', textOf(first));
      const view = client.view(first);
      assert.match(view, new RegExp(`task_status[\\s\\S]*${taskId}`), 'the follow-up call and its task id');
      assert.match(view, /[Dd]o not call long_computation again|"doNotCallAgain":"long_computation"/);

      const again = await client.call('long_computation', args);
      assert.equal(again.structuredContent?.['taskId'], taskId, 'the repeat joined the running task');
      assert.match(client.view(again), /joined/);

      const done = await follow(client, taskId);
      assert.match(client.view(done), new RegExp(`Computed ${args.label} in 45 s: [0-9a-f]{16}`));
      assert.equal(logged('task-started', taskId), 1, 'one run of the handler');
      assert.equal(logged('repeat-joined', taskId), 1);
    });

    it("approval_gate: the view says the question is the person's and where they answer; the printed command works", {
      timeout: 120_000,
    }, async () => {
      const action = `deploy web@${Math.random().toString(36).slice(2, 8)}`;
      const first = await client.call('approval_gate', { action });
      const taskId = String(first.structuredContent?.['taskId']);
      const view = client.view(first);
      const command = `node bin/mcp-tasks.js --url ${stack.url} answer ${taskId}`;
      assert.ok(view.includes(command), `the view names the person's command with this endpoint: ${view}`);
      assert.match(view, /you must not answer|the user, not you/, 'the model is told it must not answer');

      const refused = await client.call('task_answer', { taskId, answers: { approval: { approve: true } } });
      assert.equal(refused.isError, undefined, 'a refusal to hand to the user, not a mistake');
      assert.match(client.view(refused), /not for you to answer/);
      assert.match(client.view(refused), new RegExp(`task_status[\\s\\S]*${taskId}`), 'and to wait with task_status');

      const person = await runPrinted(command, ['--answer', 'approval.approve=true']);
      assert.equal(person.code, 0, person.stderr);
      const done = await follow(client, taskId);
      assert.match(client.view(done), new RegExp(`Approved and done: ${action.replace('.', '\\.')}`), 'the outcome, in either view');
    });
  });
}

describe("npm start's catalogue", () => {
  it("lists the product's tools and the fallback tools, and none of the conformance suite's fixtures", async () => {
    const listed = resultOf(await rpc(stack.url, 'tools/list', {}, { capabilities: NON_DECLARING }));
    const names = (listed['tools'] as Array<{ name: string }>).map((tool) => tool.name).sort();
    assert.deepEqual(names, [
      'approval_gate',
      'batch_process',
      'deploy_release',
      'external_job',
      'intake_form',
      'long_computation',
      'task_answer',
      'task_cancel',
      'task_status',
    ]);
  });
});

describe('a client that gives up before the budget', () => {
  it('sends notifications/cancelled, which cancels nothing: its retry joins the task, which completes', { timeout: 120_000 }, async () => {
    const client = await sdkClient();
    const created = () =>
      stack
        .output()
        .split('\n')
        .filter((line) => line.includes('"event":"task-created"') && line.includes('"tool":"long_computation"')).length;
    try {
      const before = created();
      const args = { seconds: 12, label: `gave-up-${Math.random().toString(36).slice(2, 8)}` };
      await assert.rejects(client.call('long_computation', args, { timeoutMs: 3_000 }), /timed out|timeout/i);
      const retry = await client.call('long_computation', args);
      const taskId = String(retry.structuredContent?.['taskId'] ?? '');
      const done = retry.structuredContent?.['status'] === 'working' ? await follow(client, taskId) : retry;
      assert.match(textOf(done), new RegExp(`Computed ${args.label} in 12 s`));
      assert.match(stack.output(), /"event":"client-cancelled"/);
      assert.equal(created() - before, 1, 'one task for the call and its retry: the retry joined it');
    } finally {
      await client.close();
    }
  });
});
