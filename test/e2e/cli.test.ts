/**
 * The `mcp-tasks` CLI (package bin `bin/mcp-tasks.js`) end to end against the
 * local stack as `npm start` runs it (default settings): scripted, with
 * answers from flags and `--json`, and interactively through a
 * pseudo-terminal, answering an `approval_gate` question at the prompts and
 * cancelling a running task from the Ctrl-C menu. An endpoint that is down,
 * or restarts under a call: `cli-reach.test.ts`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type IPty, spawn as spawnPty } from '@lydell/node-pty';
import { TasksClient } from '../../bin/cli/client.ts';
import type { DetailedTask } from '../../shared/protocol/wire-types.ts';
import { type CliRun, runCli } from '../support/cli-process.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { waitFor } from '../support/wait.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/mcp-tasks.js', import.meta.url));

let stack: LocalStackProcess;

before(async () => {
  stack = await startLocalStackProcess();
});

after(async () => {
  await stack?.stop();
});

/** Runs the CLI without a terminal (stdin closed), as a script would. */
function cli(args: string[], options: { viaNpx?: boolean } = {}): Promise<CliRun> {
  return runCli(stack.url, args, options);
}

/** The last line printed (on stderr: how a followed task ended). */
function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

function explain(run: CliRun): string {
  return (
    `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}\nstack log ` +
    `(tail):\n${stack.output().split('\n').slice(-20).join('\n')}`
  );
}

describe('mcp-tasks CLI, scripted', () => {
  it('npx mcp-tasks call long_computation runs the task to its result, with plain status lines off a terminal', {
    timeout: 60_000,
  }, async () => {
    const run = await cli(['call', 'long_computation', '{"seconds":2,"label":"cli"}'], { viaNpx: true });
    assert.equal(run.code, 0, explain(run));
    assert.match(run.stdout, /^Computed cli in 2 s: [0-9a-f]{16}\n$/);
    assert.match(
      run.stderr,
      /^Task ([0-9a-f-]{36}) \(resume with: mcp-tasks watch \1; its page: http:\/\/127\.0\.0\.1:\d+\/console\/tasks\/\1\)$/m,
    );
    assert.match(run.stderr, /\] working$/m);
    assert.match(run.stderr, /\] completed: Completed$/m);
    assert.doesNotMatch(run.stderr, /\u001b\[/, 'no terminal escapes off a terminal');
    // The last line is how the task ended, in the words the server gives the ended task.
    const taskId = /^Task ([0-9a-f-]{36})/m.exec(run.stderr)![1]!;
    const ended = await new TasksClient({ url: stack.url }).getTask(taskId);
    assert.equal(lastLine(run.stderr), `Task ${taskId} completed${ended.statusMessage ? `: ${ended.statusMessage}` : ''}`);
  });

  it('answers an approval_gate question from --answer flags', { timeout: 60_000 }, async () => {
    const run = await cli([
      'call',
      'approval_gate',
      '{"action":"deploy web@1.4.2"}',
      '--answer',
      'approval.approve=true',
      '--answer',
      'approval.comment=ship it',
    ]);
    assert.equal(run.code, 0, explain(run));
    assert.equal(run.stdout, 'Approved and done: deploy web@1.4.2 (ship it)\n');
    // The question is answered here, from the flags: nobody is told it waits for a person.
    assert.match(run.stderr, /\] input_required: answering approval from the given answers$/m);
    assert.doesNotMatch(run.stderr, /Waiting for a person/);
    assert.match(lastLine(run.stderr), /^Task [0-9a-f-]{36} completed/);
  });

  it('--json: a refusal ends completed with isError (exit 1); stdout holds only the task as JSON', { timeout: 60_000 }, async () => {
    const run = await cli(['--json', 'call', 'approval_gate', '{"action":"drop the table"}', '--answer', 'approval.approve=no']);
    assert.equal(run.code, 1, explain(run));
    const task = JSON.parse(run.stdout) as DetailedTask;
    assert.equal(task.status, 'completed');
    assert.equal(task.result?.['isError'], true);
    const { decidedAt, ...structured } = (task.result?.['structuredContent'] ?? {}) as Record<string, unknown>;
    assert.match(String(decidedAt), /^\d{4}-\d{2}-\d{2}T/, 'when the caller decided');
    assert.deepEqual(structured, {
      approved: false,
      action: 'drop the table',
      decidedBy: 'local',
      message: 'Not approved by local: drop the table',
    });
    assert.equal(run.stderr, '');
  });

  it('without answers it stops at input_required (exit 3); answer and watch by id finish it', { timeout: 60_000 }, async () => {
    const waiting = await cli(['--json', 'call', 'approval_gate', '{"action":"rotate keys"}']);
    assert.equal(waiting.code, 3, explain(waiting));
    const task = JSON.parse(waiting.stdout) as DetailedTask;
    assert.equal(task.status, 'input_required');
    assert.deepEqual(Object.keys(task.inputRequests ?? {}), ['approval']);

    const got = await cli(['get', task.taskId]);
    assert.equal(got.code, 0, explain(got));
    // The status names the task's page, where a person answers the approval.
    const page = `${new URL(stack.url).origin}/console/tasks/${task.taskId}`;
    assert.ok(got.stdout.includes(`input_required  Waiting for a person to answer on the task's page: ${page}\n`), got.stdout);
    assert.match(got.stdout, /\nwaiting for approval: Approve: rotate keys\?/);

    const answered = await cli(['answer', task.taskId, '--answer', 'approval.approve=true']);
    assert.equal(answered.code, 0, explain(answered));

    const watched = await cli(['--json', 'watch', task.taskId]);
    assert.equal(watched.code, 0, explain(watched));
    const done = JSON.parse(watched.stdout) as DetailedTask;
    assert.equal(done.status, 'completed');
    assert.equal((done.result?.['structuredContent'] as { approved?: unknown } | undefined)?.approved, true);
  });

  it('cancel by id stops a running task; a malformed answer or an unknown task is an error', { timeout: 60_000 }, async () => {
    const started = await cli(['--json', 'call', 'long_computation', '{"seconds":120}', '--detach']);
    assert.equal(started.code, 0, explain(started));
    const { taskId } = JSON.parse(started.stdout) as DetailedTask;
    const cancelled = await cli(['cancel', taskId]);
    assert.equal(cancelled.code, 0, explain(cancelled));
    // It prints the task as the cancel left it (ended at the worker's next check), not as it was before.
    const client = new TasksClient({ url: stack.url });
    const final = await client.getTask(taskId);
    assert.equal(final.status, 'cancelled');
    assert.equal(cancelled.stdout, `${taskId}  cancelled${final.statusMessage ? `  ${final.statusMessage}` : ''}\n`);

    const unknown = await cli(['get', '00000000-0000-4000-8000-000000000000']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Error -32602: Task not found/);

    const malformed = await cli(['call', 'approval_gate', '{"action":"x"}', '--answer', 'approval.approve=perhaps']);
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, /approval\.approve must be true or false/);
  });
});

function withoutCi(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { CI: _ci, ...rest } = env;
  return rest;
}

/** A CLI run in a pseudo-terminal: what it printed so far, keys to type, and its exit. */
class Terminal {
  readonly #pty: IPty;
  #screen = '';
  readonly exited: Promise<number>;

  constructor(args: string[]) {
    this.#pty = spawnPty(process.execPath, [BIN, ...args], {
      cols: 120,
      rows: 40,
      cwd: ROOT,
      // A person at a terminal: no `CI` variable (under it the spinner library, rightly, does not animate).
      env: { ...withoutCi(process.env), MCP_TASKS_URL: stack.url, TERM: 'xterm-256color' } as Record<string, string>,
    });
    this.#pty.onData((data) => (this.#screen += data));
    this.exited = new Promise((resolve) => this.#pty.onExit(({ exitCode }) => resolve(exitCode)));
  }

  /** Everything printed, without escape sequences. */
  get text(): string {
    return this.#screen.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
  }

  /** Waits until `pattern` shows up after the text seen so far (from `since`). */
  async waitFor(pattern: RegExp, since = 0, timeoutMs = 20_000): Promise<number> {
    const at = await waitFor(
      () => `${pattern}; terminal so far:\n${this.text}`,
      () => {
        const found = this.text.slice(since).search(pattern);
        return found >= 0 ? found : undefined;
      },
      timeoutMs,
      100,
    );
    return since + at + 1;
  }

  type(keys: string): void {
    this.#pty.write(keys);
  }

  kill(): void {
    this.#pty.kill();
  }
}

describe('mcp-tasks CLI, interactive (pseudo-terminal)', () => {
  it('answers approval_gate at prompts built from its requestedSchema', { timeout: 60_000 }, async () => {
    const term = new Terminal(['call', 'approval_gate', '{"action":"ship 2.0"}']);
    try {
      let at = await term.waitFor(/Approve: ship 2\.0\?/);
      at = await term.waitFor(/Your answer/, at);
      term.type('\r'); // Respond
      at = await term.waitFor(/Approve \(y\/N\)/, at);
      term.type('y\r');
      at = await term.waitFor(/Comment/, at);
      term.type('looks good\r');
      await term.waitFor(/Approved and done: ship 2\.0 \(looks good\)/, at);
      assert.equal(await term.exited, 0, term.text);
    } finally {
      term.kill();
    }
  });

  it('shows a live status line, and Ctrl-C offers cancel or detach: cancel ends the task', { timeout: 60_000 }, async () => {
    const term = new Terminal(['call', 'long_computation', '{"seconds":120}']);
    try {
      const taskId = /Task ([0-9a-f-]{36})/.exec(await waitForText(term, /Task [0-9a-f-]{36}/))![1]!;
      let at = await term.waitFor(/working \(\d+s\)/);
      term.type('\u0003');
      at = await term.waitFor(/what now\?/, at);
      term.type('\u001b[B\r'); // down to "Cancel the task"
      at = await term.waitFor(/Cancellation requested/, at);
      await term.waitFor(/was cancelled/, at);
      assert.equal(await term.exited, 1, term.text);
      const task = await new TasksClient({ url: stack.url }).getTask(taskId);
      assert.equal(task.status, 'cancelled');
    } finally {
      term.kill();
    }
  });
});

async function waitForText(term: Terminal, pattern: RegExp): Promise<string> {
  await term.waitFor(pattern);
  return term.text;
}
