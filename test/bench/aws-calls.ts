/**
 * `npm run bench`: what a task costs on AWS, measured (not estimated) on the
 * local stack, which runs the unchanged handlers against dynalite and fauxqs,
 * printed side by side with the minimum the design needs (the baseline) and
 * the ratio measured / minimum.
 *
 * What is counted and how (DynamoDB units of the table and of the sparse
 * index, SQS requests, worker invocations): aws-counting.ts; the minima:
 * minima.ts; the report and the cost at list prices: report.ts, pricing.ts.
 *
 * Polling is left out: the bench watches tasks through a store on a client of
 * its own, which nothing counts; the cost of one `tasks/get` is printed
 * separately (the client decides how often it polls). Every wait is for a
 * condition (task status, every sent message delivered and deleted, no call
 * in flight), never for a fixed time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_WORKER_MAX_CONCURRENCY, WORKER_BATCH_SIZE } from '../../infra/event-sources.ts';
import { ENV } from '../../shared/config.ts';
import { startLocalStackProcess } from '../support/local-stack.ts';
import { rpc } from '../support/wire.ts';
import { detail, type Figures, figuresOf, meter, resetMeter } from './aws-counting.ts';
import { countScenarios, countWithIssuer, openCountingStack } from './aws-scenarios.ts';
import { callbackLines, callbackVersusPoll } from './callback-vs-poll.ts';
import { consoleCost } from './console-cost.ts';
import { FALLBACK_CALL_MIN, LATER_REPEAT_MIN, LATER_RUN_MIN, REPEAT_JOIN_MIN, TASK_STATUS_MIN } from './minima.ts';
import { FIGURE_COLUMNS, report } from './report.ts';
import { roundCost, type TaskCost } from './round-cost.ts';
import { workflowVersusPoll } from './workflow-vs-poll.ts';

const bench = await openCountingStack();
const { stack, until, statusOf, quiescent, createTask } = bench;
try {
  const { rows, gets } = await countScenarios(bench);
  const waits = await callbackVersusPoll(bench);
  const withIssuer = await countWithIssuer();
  report([...rows, withIssuer, ...waits], gets);
  console.log(callbackLines(waits).join('\n'));
  console.log((await workflowVersusPoll(bench)).join('\n'));
  const fallback = await clientsWithoutTasks(rows[0]!.taskId);
  const simple = rows[0]!;
  const task = { figures: simple.measured, logBytes: simple.meter.logBytes, apiRequests: simple.meter.apiRequests };
  const round = roundCost({ task, fallback });
  console.log(round.lines.join('\n'));
  console.log((await consoleCost(bench, simple.taskId)).join('\n'));
  if (round.over.length > 0) process.exitCode = 1;
  await localConcurrency();
} finally {
  await bench.close();
}
await restartRecovery();

// --- clients without tasks (the fallback) -------------------------------------------------

/**
 * What the fallback costs: a call from a client that does not declare the
 * tasks extension and ends within the synchronous budget (a task created,
 * run by the worker, waited on by the request), and one `task_status` call
 * of a finished task. Measured like the scenarios above, next to the minimum.
 */
async function clientsWithoutTasks(finishedTaskId: string): Promise<TaskCost> {
  const withoutTasks = { capabilities: { elicitation: {} }, timeoutMs: 30_000 };
  await quiescent();
  resetMeter();
  meter.apiRequests += 1;
  const started = Date.now();
  const call = await rpc(stack.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.01 } }, withoutTasks);
  const answeredMs = Date.now() - started;
  const text = (call.body?.result?.['content'] as Array<{ text?: string }> | undefined)?.[0]?.text;
  if (text !== 'Computed result after 0.01s') throw new Error(`bench: the fallback call did not answer its result: ${call.text}`);
  await quiescent();
  const measured = figuresOf(meter);
  const callCost = { figures: measured, logBytes: meter.logBytes, apiRequests: meter.apiRequests };
  const callDetail = detail(meter);

  await quiescent();
  resetMeter();
  const calls = 5;
  for (let i = 0; i < calls; i++) {
    const status = await rpc(stack.url, 'tools/call', { name: 'task_status', arguments: { taskId: finishedTaskId } }, withoutTasks);
    if (status.body?.result?.['isError'] === true || !status.body?.result) throw new Error(`bench: task_status failed: ${status.text}`);
  }
  const status = figuresOf(meter);
  const statusDetail = detail(meter, calls);
  const per = (value: number) => value / calls;

  // The same call again once its task ended: run 1 of the window, its end counted on the head.
  await quiescent();
  resetMeter();
  const again = await rpc(stack.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.01 } }, withoutTasks);
  if ((again.body?.result?.['content'] as Array<{ text?: string }> | undefined)?.[0]?.text !== 'Computed result after 0.01s') {
    throw new Error(`bench: the later run did not answer its result: ${again.text}`);
  }
  await quiescent();
  const later = figuresOf(meter);
  const laterDetail = detail(meter);

  // A repeat of a call whose task waits for input (no worker runs meanwhile, so only the repeat is metered): run 0, then run 1.
  const question = { name: 'multi_input', arguments: {} };
  const repeatOf = async (run: number) => {
    const asked = await rpc(stack.url, 'tools/call', question, withoutTasks);
    const askedId = (asked.body?.result?.['structuredContent'] as { taskId?: string } | undefined)?.taskId;
    await quiescent();
    resetMeter();
    const repeat = await rpc(stack.url, 'tools/call', question, withoutTasks);
    if ((repeat.body?.result?.['structuredContent'] as { taskId?: string } | undefined)?.taskId !== askedId) {
      throw new Error(`bench: the repeat of run ${run} did not join: ${repeat.text}`);
    }
    await quiescent();
    const figures = figuresOf(meter);
    const commands = detail(meter);
    await rpc(stack.url, 'tools/call', { name: 'task_cancel', arguments: { taskId: askedId } }, withoutTasks);
    return { figures, commands };
  };
  const joined = await repeatOf(0);
  const laterJoined = await repeatOf(1);

  const columns = FIGURE_COLUMNS;
  const line = (label: string, figures: Figures, minimum: Figures) =>
    console.log(`| ${label} | ${columns.map(([, key]) => `${figures[key]} | ${minimum[key]}`).join(' | ')} |`);
  console.log('');
  console.log('Clients without tasks (the fallback), measured the same way:');
  console.log('');
  console.log(`| call | ${columns.map(([title]) => `${title} | min`).join(' | ')} |`);
  console.log(`|---|${columns.map(() => '--:|--:').join('|')}|`);
  line('fallback call ending within the budget', measured, FALLBACK_CALL_MIN);
  line('the same call again once it ended (a later run: any number of runs before)', later, LATER_RUN_MIN);
  line('a repeated identical call (joins the unfinished task)', joined.figures, REPEAT_JOIN_MIN);
  line('a repeat of a later run (joins it; any number of runs before)', laterJoined.figures, LATER_REPEAT_MIN);
  console.log(
    `| one task_status call (no waitSeconds) | ${per(status.rcu)} | ${TASK_STATUS_MIN.rcu} | ${per(status.wcu)} | 0 | ` +
      `${per(status.ddbRequests)} | ${TASK_STATUS_MIN.ddbRequests} | ${per(status.sqsRequests)} | 0 | ${per(status.invocations)} | 0 ` +
      `| ${per(status.events)} | 0 |`,
  );
  console.log('');
  console.log(
    `- the fallback call answered its own result after ${answeredMs} ms (the request reads the row once a second); ${callDetail}`,
  );
  console.log(
    `- the later run: ${laterDetail}; the third UpdateItem (after the claim and the finish) is the head's count of its ended runs`,
  );
  console.log(`- the repeated call: ${joined.commands}`);
  console.log(
    `- the repeat of a later run: ${laterJoined.commands}; the refused put is billed by the size of the row it checked (1 WCU per KB: ` +
      'here a waiting task of two questions, just over 1 KB)',
  );
  console.log(`- task_status: ${statusDetail}`);
  console.log(
    '- past the budget the call costs at most one read a second of the budget (20), the task what any task costs, and each task_status ' +
      'with waitSeconds at most one read a second more',
  );
  return callCost;
}

// --- the local stack's concurrency and restart recovery -----------------------------------

/**
 * 20 one-second tasks created at once: with the deployed event source
 * settings (batches of WORKER_BATCH_SIZE, DEFAULT_WORKER_MAX_CONCURRENCY
 * batches at once) they run side by side, so the wall time is about one
 * task's, not twenty.
 */
async function localConcurrency(): Promise<void> {
  const count = 20;
  const seconds = 1;
  await quiescent();
  const started = Date.now();
  const ids = await Promise.all(Array.from({ length: count }, () => createTask('slow_compute', { seconds })));
  await Promise.all(ids.map((taskId) => statusOf(taskId, ['completed'])));
  const wall = Date.now() - started;
  console.log('');
  console.log('Local stack (npm start settings), measured here:');
  console.log(
    `- concurrency: ${count} tasks of ${seconds} s created at once finished in ${wall} ms (ideal ${seconds * 1000} ms, ` +
      `${(wall / (seconds * 1000)).toFixed(2)}×; ` +
      `fully serialised would be ${count * seconds * 1000} ms); at most ${stack.workerStats().peak} worker batches at once ` +
      `(batch size ${WORKER_BATCH_SIZE}, max concurrency ${DEFAULT_WORKER_MAX_CONCURRENCY})`,
  );
}

/**
 * A task running when the stack process is killed (SIGKILL), then the stack
 * started again on the same data: how long until it is ready, and until the
 * interrupted task is finished (its run starts over: a 2 s task without steps).
 */
async function restartRecovery(): Promise<void> {
  const restartDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-restart-'));
  const env = { [ENV.toolset]: 'all' };
  const first = await startLocalStackProcess({ dataDir: restartDir, env });
  let second: Awaited<ReturnType<typeof startLocalStackProcess>> | undefined;
  try {
    const created = await rpc(first.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 2 } });
    const taskId = created.body?.result?.['taskId'];
    if (typeof taskId !== 'string') throw new Error(`bench: no task: ${created.text}`);
    await until('the task to be running', () => (first.output().includes('"event":"task-created"') ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    first.kill('SIGKILL');
    await first.stop();
    const restarted = Date.now();
    second = await startLocalStackProcess({ dataDir: restartDir, env });
    const ready = Date.now() - restarted;
    for (;;) {
      const got = await rpc(second.url, 'tasks/get', { taskId });
      const status = got.body?.result?.['status'];
      if (status === 'completed') break;
      if (status !== 'working' || Date.now() - restarted > 60_000) throw new Error(`bench: interrupted task ended ${got.text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const done = Date.now() - restarted;
    const recovery = /"event":"recovery"[^\n]*"ms":(\d+)/.exec(second.output())?.[1];
    console.log(
      `- restart recovery: after a SIGKILL with a task running, the restarted stack was ready in ${ready} ms (start-up recovery ` +
        `${recovery ?? '?'} ms of it) ` +
        `and had the task completed ${done} ms after the restart began (its 2 s run included; before start-up recovery: minutes)`,
    );
  } finally {
    await second?.stop();
    await first.stop();
    await rm(restartDir, { recursive: true, force: true });
  }
}
