/**
 * `LOCAL_AUTH=1 npm start` in the project `init` made, serving every tool but
 * the workflow (`src/tools/task-tools.ts`): the caller (`alice`, signed in at
 * the local authorization server) calls each through the package's CLI and
 * it runs to its end: the sample tool answering its question, the plain task
 * tool, the tool that waits for a build system's callback (a server of this
 * test), and the tool that asks a person, which only an approver other than
 * the caller decides (`ada`, given the approvers' group, on the task's page
 * in Chromium).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { personToken } from '../support/oauth.ts';
import { TASK_TOOLS } from './kinds.ts';
import { APPROVERS, approveOnPage, callerCli, type ProjectStack, startProjectStack } from './project.ts';

let stack: ProjectStack;
let caller: ReturnType<typeof callerCli>;

before(async () => {
  stack = await startProjectStack(['--tools', 'src/tools/task-tools.ts', '--export', 'taskTools'], APPROVERS);
  caller = callerCli(stack.url, await personToken(stack.url, 'alice'));
});

after(async () => {
  await stack?.stop();
});

describe('LOCAL_AUTH=1 npm start in the project, every kind of task tool', () => {
  it('serves the task tools and nothing else', async () => {
    const tools = (await caller.cli('tools'))
      .trim()
      .split('\n')
      .map((line) => line.split('\t')[0]);
    assert.deepEqual(tools, [...TASK_TOOLS]);
  });

  it('completes the sample tool, answering its question, and the plain task tool', async () => {
    const hello = await caller.task('call', 'hello', '{"name":"Ada"}', '--answer', 'style.formal=true');
    assert.equal(hello.status, 'completed');
    assert.equal(hello.result?.content?.[0]?.text, 'Good day, Ada.');
    const counted = await caller.task('call', 'count_words', '{"text":"one two three"}');
    assert.equal(counted.status, 'completed');
    assert.deepEqual(counted.result?.structuredContent, { count: 3 });
  });

  it("completes the tool that waits for a callback, once the build system posts to the callback's URL", async () => {
    const asked: Array<{ id: string; target: string }> = [];
    // The build system: answers the submit, then posts the artifact to the callback's URL.
    const system: Server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk));
      request.on('end', () => {
        const job = JSON.parse(body) as { id: string; target: string; callbackUrl: string };
        asked.push({ id: job.id, target: job.target });
        response.writeHead(202).end();
        void fetch(job.callbackUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ result: { artifact: `${job.target}.zip` } }),
        });
      });
    });
    system.listen(0, '127.0.0.1');
    await once(system, 'listening');
    try {
      const url = `http://127.0.0.1:${(system.address() as AddressInfo).port}/builds`;
      const built = await caller.task('call', 'build_artifact', JSON.stringify({ target: 'web', system: url }));
      assert.equal(built.status, 'completed', JSON.stringify(built));
      assert.deepEqual(built.result?.structuredContent, { artifact: 'web.zip' });
      assert.deepEqual(
        asked.map((job) => job.target),
        ['web'],
      );
    } finally {
      system.close();
    }
  });

  it('completes the tool that asks a person once an approver other than the caller approves on the task page', async () => {
    const { taskId } = await caller.task('call', 'approve_release', '{"release":"web@2"}', '--detach');
    await caller.until(taskId, (task) => task.status === 'input_required');
    // Four eyes: the caller's own answer is refused.
    await assert.rejects(caller.cli('answer', taskId, '--answer', 'approval.approve=true', '--no-input'));
    await approveOnPage(stack.url, 'ada', taskId, 'approval');
    const done = await caller.task('watch', taskId, '--no-input');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result?.structuredContent, { approved: true, decidedBy: 'ada' });
  });
});
