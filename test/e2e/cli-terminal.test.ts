/**
 * The `mcp-tasks` CLI where people meet it, against the local stack with
 * approvers named: a four-eyes question, which the caller may not decide,
 * at a terminal and without one (never prompted, never offered as a
 * command: the CLI names the page and follows the task until an approver
 * decides); a pseudo-terminal of 0×0 (plain lines, bounded, the CLI ending
 * with its task); the live line's redraws at a terminal; SIGTERM.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TasksClient } from '../../bin/cli/client.ts';
import type { LocalStack } from '../../bin/local/options.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { TaskActions } from '../../shared/actions/task-actions.ts';
import { principalFor } from '../../shared/auth/principal.ts';
import { startCli } from '../support/cli-process.ts';
import { Terminal, ZeroSizeTerminal } from '../support/cli-terminal.ts';
import { waitFor } from '../support/wait.ts';

let stack: LocalStack;
let dataDir: string;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-cli-terminal-'));
  stack = await startLocalStack({ port: 0, dataDir, log: () => {}, env: { TASKS_APPROVERS: 'group:approvers' } });
});

after(async () => {
  await stack?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const TASK_ID = /Task ([0-9a-f-]{36})/;

/** The task's page, as the CLI names it. */
function pageOf(taskId: string): string {
  return `${stack.url.replace(/\/mcp$/, '')}/console/tasks/${taskId}`;
}

/** An approver (not the caller) decides the task's approval on its page. */
async function approverDecides(taskId: string, content: Record<string, unknown>): Promise<void> {
  const actions = new TaskActions({ store: stack.store, queue: stack.queue, log: () => {}, now: Date.now });
  const approver = { principal: principalFor('https://people.example', 'ada'), name: 'ada', approver: true };
  await actions.decide(taskId, approver, { approval: { action: 'accept', content } });
}

/** The task as its caller reads it. */
function read(taskId: string) {
  return new TasksClient({ url: stack.url }).getTask(taskId);
}

describe('mcp-tasks CLI and a four-eyes question', () => {
  it('at a terminal: no prompt; it names the approver and the page, follows on, and exits 0 once an approver approves', {
    timeout: 90_000,
  }, async () => {
    const term = new Terminal(stack.url, ['call', 'approval_gate', '{"action":"drop the old table","fourEyes":true}']);
    try {
      let at = await term.waitFor(TASK_ID);
      const taskId = TASK_ID.exec(term.text)![1]!;
      at = await term.waitFor(/approval must be decided by an approver other than you \(you started the task\), on its page: /, at);
      assert.ok(term.text.includes(`on its page: ${pageOf(taskId)}`), term.text);
      at = await term.waitFor(/waiting for an approver to decide approval/, at);
      assert.doesNotMatch(term.text, /Your answer|Approve \(y\/N\)|Comment/, 'the caller is asked nothing');
      await approverDecides(taskId, { approve: true, comment: 'checked the backup' });
      await term.waitFor(/Approved and done: drop the old table \(checked the backup\)/, at);
      assert.equal((await term.exited).exitCode, 0, term.text);
      assert.match(term.text, new RegExp(`Task ${taskId} completed`));
    } finally {
      term.kill();
    }
  });

  it('without a terminal: the same words, no answer command offered, a given answer not sent; a rejection ends it with exit 1', {
    timeout: 90_000,
  }, async () => {
    // The caller's own answer would be refused: it is not sent, and the task waits for the approver.
    const run = startCli(stack.url, [
      'call',
      'approval_gate',
      '{"action":"rotate the keys","fourEyes":true}',
      '--answer',
      'approval.approve=true',
    ]);
    const taskId = await waitFor('the task id', () => TASK_ID.exec(run.stderr())?.[1], 30_000, 100);
    await waitFor(
      () => `the approver's line; stderr so far:\n${run.stderr()}`,
      () => run.stderr().includes('must be decided by an approver'),
      30_000,
      100,
    );
    await approverDecides(taskId, { approve: false, comment: 'not this week' });
    const { code, stdout, stderr } = await run.done;
    assert.equal(code, 1, stderr);
    assert.ok(
      stderr.includes(`approval must be decided by an approver other than you (you started the task), on its page: ${pageOf(taskId)}`),
    );
    assert.match(stderr, /\] input_required: waiting for an approver to decide approval$/m);
    assert.doesNotMatch(stderr, /mcp-tasks answer|Answer on its page|from the given answers|Error/, 'nothing the server would refuse');
    assert.match(stdout, /^Not approved by ada: rotate the keys\. Reason: not this week$/m);
    assert.match(stderr.trimEnd().split('\n').at(-1)!, new RegExp(`^Task ${taskId} completed with a tool error`));
  });

  it('get marks the question as an approver’s; answer refuses to ask for it (exit 1) and names the page', { timeout: 60_000 }, async () => {
    const started = await startCli(stack.url, ['--json', 'call', 'approval_gate', '{"action":"wipe","fourEyes":true}', '--detach']).done;
    const { taskId } = JSON.parse(started.stdout) as { taskId: string };
    await waitFor('the question', async () => (await read(taskId)).status === 'input_required', 30_000, 100);
    const got = await startCli(stack.url, ['get', taskId]).done;
    assert.match(got.stdout, /^waiting for approval: Approve: wipe\? \(an approver other than you decides it, on its page\)$/m);
    const answered = await startCli(stack.url, ['answer', taskId, '--answer', 'approval.approve=true']).done;
    assert.equal(answered.code, 1);
    assert.equal(
      answered.stderr,
      `Task ${taskId}: approval must be decided by an approver other than you (you started the task), on its page: ${pageOf(taskId)}\n`,
    );
    assert.equal((await read(taskId)).status, 'input_required', 'nothing was sent');
    await new TasksClient({ url: stack.url }).cancel(taskId);
  });
});

describe('mcp-tasks CLI output at a terminal', () => {
  it('on a 0×0 pseudo-terminal: plain lines, no escapes, a bounded output, and the CLI exits when the task ends', {
    timeout: 90_000,
  }, async () => {
    const term = new ZeroSizeTerminal(stack.url, ['call', 'long_computation', '{"seconds":3,"label":"zero"}']);
    try {
      const code = await Promise.race([term.exited, new Promise<'hung'>((resolve) => setTimeout(resolve, 60_000, 'hung'))]);
      assert.equal(code, 0, `exit ${code}; printed ${term.printed} characters:\n${term.text.slice(0, 2000)}`);
      assert.doesNotMatch(term.raw, /\u001b\[/, 'no cursor movement or clearing');
      assert.ok(term.printed < 4000, `printed ${term.printed} characters`);
      assert.match(term.text, /^Computed zero in 3 s: [0-9a-f]{16}\r?$/m);
      assert.match(term.text, /Task [0-9a-f-]{36} completed/);
    } finally {
      await term.kill();
    }
  });

  it('on a 0×0 pseudo-terminal, SIGTERM ends it at once (143); the task goes on', { timeout: 90_000 }, async () => {
    const term = new ZeroSizeTerminal(stack.url, ['call', 'long_computation', '{"seconds":120}']);
    try {
      await term.waitFor(/\] working/);
      const taskId = TASK_ID.exec(term.text)![1]!;
      await term.signal('SIGTERM');
      const code = await Promise.race([term.exited, new Promise<'hung'>((resolve) => setTimeout(resolve, 20_000, 'hung'))]);
      assert.equal(code, 143, term.text.slice(-2000));
      assert.match(term.text, new RegExp(`Stopped following \\(SIGTERM\\); the task goes on\\. Resume with: mcp-tasks watch ${taskId}`));
      assert.equal((await read(taskId)).status, 'working');
      await new TasksClient({ url: stack.url }).cancel(taskId);
    } finally {
      await term.kill();
    }
  });

  it('at a terminal, the live line redraws at most four times a second, stops when the task ends, and SIGTERM ends it', {
    timeout: 90_000,
  }, async () => {
    const term = new Terminal(stack.url, ['call', 'long_computation', '{"seconds":4}']);
    try {
      await term.waitFor(/completed/, 0, 60_000);
      assert.equal((await term.exited).exitCode, 0, term.text);
      // Each redraw draws one frame of the spinner (a braille glyph).
      const frames = term.chunks.flatMap((chunk) => (chunk.data.match(/[\u2800-\u28ff]/g) ?? []).map(() => chunk.at));
      assert.ok(frames.length >= 2, `the line was drawn: ${JSON.stringify(term.raw)}`);
      const seconds = (frames.at(-1)! - frames[0]!) / 1000;
      assert.ok(frames.length <= 5 * seconds + 5, `${frames.length} redraws in ${seconds.toFixed(1)} s`);
      const end = term.raw.lastIndexOf('completed');
      assert.doesNotMatch(term.raw.slice(end), /[\u2800-\u28ff]/, 'nothing drawn after the task ended');
    } finally {
      term.kill();
    }

    const waiting = new Terminal(stack.url, ['call', 'long_computation', '{"seconds":120}']);
    try {
      await waiting.waitFor(/working \(\d+s\)/);
      const taskId = TASK_ID.exec(waiting.text)![1]!;
      waiting.signal('SIGTERM');
      const exit = await Promise.race([waiting.exited, new Promise<'hung'>((resolve) => setTimeout(resolve, 20_000, 'hung'))]);
      assert.deepEqual(exit, { exitCode: 143, signal: 0 }, waiting.text.slice(-2000));
      assert.match(waiting.text, /Stopped following \(SIGTERM\); the task goes on/);
      await new TasksClient({ url: stack.url }).cancel(taskId);
    } finally {
      waiting.kill();
    }
  });
});
