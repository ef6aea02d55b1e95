/**
 * Callbacks on the local stack (`npm start` as a child process): a tool hands
 * its callback URL to an outside HTTP service (this test's, or the simulated
 * job system the stack runs) and suspends; the service's POST to
 * `/callbacks/<token>` resumes it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { localStackSecret } from '../../bin/local/data-dir.ts';
import { runOps } from '../../bin/ops/cli.ts';
import { sealCallback } from '../../shared/callback-tokens.ts';
import { DEFAULT_SETTINGS } from '../../shared/config.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { callbackIdOf } from '../../shared/runtime/callbacks.ts';
import { createTask } from '../support/durable.ts';
import { type LocalStackProcess, startLocalStackProcess } from '../support/local-stack.ts';
import { waitFor } from '../support/wait.ts';
import { pollUntil, rpc } from '../support/wire.ts';

/** What the outside service was handed: the callback's id and URL. */
interface Handed {
  id: string;
  url: string;
}

describe('callbacks on the local stack', () => {
  let root: string;
  let stack: LocalStackProcess;
  let service: Server;
  let serviceUrl: string;
  let handed: Handed[];
  let cancels: string[];
  /** Runs when a job is handed over, before the service answers (e.g. a fast outside system). */
  let onHanded: (job: Handed) => Promise<void>;

  const post = async (url: string, body: unknown) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as { status: string } };
  };
  /** The functions' JSON log lines for `taskId` with this event. */
  const lines = (event: string, taskId: string, of: LocalStackProcess = stack) =>
    of
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry['event'] === event && entry['taskId'] === taskId);
  // `npm start`'s settings, the test catalogue, and sweeps every 300 ms (deadlines are enforced within a second).
  // Its lease is long, so the sweeper never looks at a task before it suspends: each run in these tests is one a test caused.
  const LOCAL = { TASKS_TOOLSET: 'test', LOCAL_SWEEP_INTERVAL_MS: '300' };
  /** Generous: the machine may be busy; nothing here asserts how fast anything is. */
  const SETTLE_MS = 60_000;
  const start = (dataDir: string) => startLocalStackProcess({ dataDir, env: { ...LOCAL, EXTERNAL_JOB_JOB_SYSTEM_URL: serviceUrl } });
  /**
   * A task of `outside_wait`, once it has suspended on its callback (the service was handed it, no lease), or
   * already ended past it (a short timeout on a busy machine may pass before the test looks).
   */
  async function suspended(args: Record<string, unknown> = {}): Promise<{ taskId: string; job: Handed }> {
    const count = handed.length;
    const taskId = await createTask(stack.url, 'outside_wait', { serviceUrl, ...args });
    await waitFor('the service to be handed the callback', () => handed.length > count, SETTLE_MS);
    await pollUntil(stack.url, taskId, (task) => /call back/.test(task.statusMessage ?? '') || task.status !== 'working', SETTLE_MS);
    return { taskId, job: handed.at(-1)! };
  }

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'mcp-tasks-callbacks-'));
    service = createServer((req, res) => {
      void readJson(req).then(async (body) => {
        const path = req.url ?? '/';
        if (path.endsWith('/cancel')) cancels.push(String(body['id']));
        else {
          // `outside_wait` posts { id, url }; `external_job` posts { jobId, callbackUrl, … }.
          const job = { id: String(body['id'] ?? body['jobId']), url: String(body['url'] ?? body['callbackUrl']) };
          handed.push(job);
          await onHanded(job);
        }
        res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    stack = await start(join(root, 'main'));
  });
  after(async () => {
    await stack?.stop();
    await new Promise<void>((resolve) => service.close(() => resolve()));
    await rm(root, { recursive: true, force: true });
  });
  beforeEach(() => {
    handed = [];
    cancels = [];
    onHanded = async () => {};
  });

  it('suspends with no invocation until the POST, which resumes it with the payload; a repeat is a duplicate, another a conflict, after the end 410', async () => {
    const { taskId, job } = await suspended();
    const waiting = await pollUntil(stack.url, taskId, () => true);
    assert.equal(waiting.status, 'working');
    assert.equal(waiting.pollIntervalMs, DEFAULT_SETTINGS.maxPollIntervalMs, 'the poll interval grows to the ceiling while waiting');
    assert.match(job.url, new RegExp(`^${stack.url.replace(/\/mcp$/, '')}/callbacks/[A-Za-z0-9_-]+$`));
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a few sweeps pass: nothing runs the task meanwhile
    assert.equal(lines('ran', taskId).length, 1, 'one run: the one that suspended');
    assert.equal(lines('task-started', taskId).length, 1);

    assert.deepEqual(await post(job.url, { result: { rows: 42 } }), { status: 200, body: { status: 'accepted' } });
    const done = await pollUntil(stack.url, taskId, (task) => task.status === 'completed', SETTLE_MS);
    assert.deepEqual(done.result?.['structuredContent'], { result: { rows: 42 } });
    assert.equal(lines('ran', taskId).length, 2, 'one more run: the resume');
    assert.equal(handed.length, 1, 'the submit ran once');

    assert.equal((await post(job.url, { result: { rows: 42 } })).status, 410, 'after the end');
  });

  it('a duplicate completion succeeds without effect, a different one is refused 409', async () => {
    // The task sleeps durably after its callback, so it is still running its course while the repeats come.
    const { taskId, job } = await suspended({ holdMs: 600_000 });
    assert.deepEqual(await post(job.url, { result: { a: 1, b: 2 } }), { status: 200, body: { status: 'accepted' } });
    assert.equal((await post(job.url, { result: { b: 2, a: 1 } })).body.status, 'duplicate');
    assert.equal((await post(job.url, { result: { a: 2 } })).status, 409);
    assert.equal((await post(job.url, { error: { message: 'late failure' } })).status, 409);
    await pollUntil(stack.url, taskId, (task) => task.statusMessage === 'Holding', SETTLE_MS);
    await rpc(stack.url, 'tasks/cancel', { taskId });
  });

  it('a completion that arrives before the task has suspended works', async () => {
    onHanded = async (job) => void assert.equal((await post(job.url, { result: 'fast' })).status, 200);
    const taskId = await createTask(stack.url, 'outside_wait', { serviceUrl });
    const done = await pollUntil(stack.url, taskId, (task) => task.status === 'completed', SETTLE_MS);
    assert.deepEqual(done.result?.['structuredContent'], { result: 'fast' });
    assert.equal(handed.length, 1);
  });

  it('a posted error and a timeout reach the handler as typed errors; a heartbeat timeout too', async () => {
    const failed = await suspended();
    assert.equal((await post(failed.job.url, { error: { message: 'disk full' } })).status, 200);
    const timedOut = await suspended({ timeoutMs: 1500 });
    const silent = await suspended({ timeoutMs: 600_000, heartbeatTimeoutMs: 1500 });
    for (const [taskId, text] of [
      [failed.taskId, 'failed: disk full'],
      [timedOut.taskId, 'timed out: timeout'],
      [silent.taskId, 'timed out: heartbeat'],
    ] as const) {
      const done = await pollUntil(stack.url, taskId, (task) => task.status === 'completed', SETTLE_MS);
      assert.deepEqual(done.result?.['content'], [{ type: 'text', text }]);
    }
    assert.equal((await post(timedOut.job.url, { result: 'late' })).status, 410, 'expired');
  });

  it('heartbeats keep a callback alive past its heartbeat timeout', async () => {
    const { taskId, job } = await suspended({ timeoutMs: 600_000, heartbeatTimeoutMs: 2000 });
    for (let beat = 0; beat < 4; beat++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal((await post(job.url, { heartbeat: true })).status, 200);
    }
    assert.equal((await pollUntil(stack.url, taskId, () => true)).status, 'working');
    assert.equal((await post(job.url, { result: 'alive' })).status, 200);
    const done = await pollUntil(stack.url, taskId, (task) => task.status === 'completed', SETTLE_MS);
    assert.deepEqual(done.result?.['structuredContent'], { result: 'alive' });
  });

  it('a cancel while waiting runs onCancel once, then the task ends cancelled', async () => {
    const { taskId, job } = await suspended();
    await rpc(stack.url, 'tasks/cancel', { taskId });
    const done = await pollUntil(stack.url, taskId, (task) => task.status === 'cancelled', SETTLE_MS);
    assert.equal(done.status, 'cancelled');
    assert.deepEqual(cancels, [job.id]);
    assert.equal((await post(job.url, { result: 'x' })).status, 410);
  });

  it('forged, expired and oversized completions are refused and change nothing; the token shows nowhere', async () => {
    const { taskId, job } = await suspended({ timeoutMs: 600_000 });
    const token = job.url.split('/callbacks/')[1]!;
    const before = await pollUntil(stack.url, taskId, () => true);
    const base = job.url.slice(0, job.url.length - token.length);
    const forged = `${base}${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    assert.equal((await post(forged, { result: 1 })).status, 404);
    assert.equal((await post(`${base}garbage`, { result: 1 })).status, 404);
    // The same bytes spelled otherwise (padding added): refused like a forged token.
    assert.equal((await post(`${job.url}${'='.repeat((4 - (token.length % 4)) % 4 || 4)}`, { result: 1 })).status, 404);
    const get = await fetch(job.url);
    assert.deepEqual([get.status, get.headers.get('allow')], [405, 'POST']);
    // A token of this stack (sealed with the key derived from its secret) for this very callback, expired.
    const keys = purposeKeys(localStackSecret(stack.dataDir));
    const expired = await sealCallback(keys, { taskId, callbackId: callbackIdOf(taskId, 'outside'), expiresAt: Date.now() - 1000 });
    assert.deepEqual(await post(`${base}${expired}`, { result: 1 }), {
      status: 410,
      body: { status: 'expired', message: 'The callback has expired' },
    });
    assert.equal((await post(job.url, { result: 'x'.repeat(70 * 1024) })).status, 413);
    assert.equal((await fetch(job.url, { method: 'POST', body: '{"result":' })).status, 400);
    const after = await pollUntil(stack.url, taskId, () => true);
    assert.equal(after.lastUpdatedAt, before.lastUpdatedAt);
    assert.equal(after.status, 'working');

    // Nowhere: the console's page, `ops inspect` (row and journal), the log lines.
    const page = await (await fetch(`${stack.url.replace(/\/mcp$/, '')}/console/tasks/${taskId}`)).text();
    assert.match(page, new RegExp(taskId));
    let inspected = '';
    assert.equal(
      await runOps(['inspect', taskId, '--outputs', join(stack.dataDir, 'outputs.json')], (text) => void (inspected += text)),
      0,
    );
    assert.match(inspected, /callback:outside/);
    for (const [where, text] of [
      ['the page', page],
      ['ops inspect', inspected],
      ['the logs', stack.output()],
    ] as const) {
      assert.equal(text.includes(token), false, `the token is not in ${where}`);
    }
    assert.equal((await post(job.url, { result: 'ok' })).status, 200);
  });

  it('external_job in callback mode: the simulated job system the stack runs calls back over HTTP', async () => {
    const own = await startLocalStackProcess({ dataDir: join(root, 'job-system'), env: LOCAL });
    try {
      const taskId = await createTask(own.url, 'external_job', { input: 'abcd', mode: 'callback', durationSeconds: 1 });
      const done = await pollUntil(own.url, taskId, (task) => task.status === 'completed', 20_000);
      assert.match(JSON.stringify(done.result?.['content']), /succeeded \(called back\): processed 4 characters/);
      assert.ok(own.output().includes('"event":"job-system-called-back"'));
    } finally {
      await own.stop();
    }
  });

  it('a SIGKILL of the whole stack between the callback write and the resume: after a restart the task still completes', async () => {
    const dataDir = join(root, 'kill');
    const doomed = await start(dataDir);
    let killed: Promise<unknown> | undefined;
    onHanded = async (job) => {
      if (killed !== undefined) return; // the resubmit after the restart (the step had not been recorded): the same job id
      assert.equal((await post(job.url, { result: { jobId: job.id, output: 'survived' } })).status, 200);
      doomed.kill('SIGKILL');
      killed = doomed.stop();
      await killed;
    };
    const taskId = await createTask(doomed.url, 'external_job', { input: 'abc', mode: 'callback', durationSeconds: 0 });
    await waitFor('the kill', () => killed !== undefined, 15_000);
    await killed;
    const revived = await start(dataDir);
    try {
      const done = await pollUntil(revived.url, taskId, (task) => task.status === 'completed', 20_000);
      assert.deepEqual(done.result?.['structuredContent'], {
        jobId: handed[0]!.id,
        output: 'survived',
        message: `Job ${handed[0]!.id} succeeded (called back): survived`,
      });
      assert.equal(handed.length, 2, 'submitted at least once: again after the kill, the step being unrecorded');
      assert.equal(handed[0]!.id, handed[1]!.id, 'with the same id, which the outside system deduplicates on');
    } finally {
      await revived.stop();
    }
  });
});

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}
