/**
 * `npm run bench:load`: a load run on the local stack with `npm start`'s
 * settings — N tasks a second (`BENCH_LOAD_TPS`, default 10) for a minute
 * (`BENCH_LOAD_SECONDS`, default 60), each a `slow_compute` of one second
 * (`BENCH_LOAD_TASK_SECONDS`) that its client polls with `tasks/get` at the
 * `pollIntervalMs` the server suggests until it completes — reporting what
 * the capacity model (`infra/capacity.ts`) takes as inputs, measured:
 *
 * - CPU milliseconds per task, per function, from V8's sampling profiler:
 *   each sample goes to the first frame (from the leaf) that belongs to a
 *   known part — the MCP function (protocol, auth, the MCP SDK, zod), the
 *   worker (runtime, tools), the store and AWS SDK (both functions: split by
 *   the AWS calls each makes per task, as the model counts them), the
 *   emulators (dynalite, fauxqs: not deployed), the local plumbing (HTTP
 *   adapter, poller) and the load generator itself;
 * - p50/p99 of `tasks/get` latency and of time-to-start (`TimeQueued`: from
 *   creation to the worker's claim);
 * - the AWS calls the functions make, per task, counted on their clients;
 *
 * next to the model's per-task counts and assumed billed milliseconds. On
 * this machine (2 cores shared with other work) the figures are for
 * comparison between runs, not AWS's; nothing is asserted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { startLocalStack } from '../../bin/local/stack.ts';
import { perTask } from '../../infra/per-task.ts';
import { ASSUMED } from '../../infra/prices.ts';
import { ENV } from '../../shared/config.ts';
import { jsonLog } from '../../shared/log.ts';
import { rpc } from '../support/wire.ts';

const TPS = Number(process.env['BENCH_LOAD_TPS'] ?? 10);
const SECONDS = Number(process.env['BENCH_LOAD_SECONDS'] ?? 60);
const TASK_SECONDS = Number(process.env['BENCH_LOAD_TASK_SECONDS'] ?? 1);
/** How long tasks created at the end may take to finish before the run gives up on them. */
const DRAIN_MS = 60_000;

// --- counting the functions' AWS calls ------------------------------------------------

const calls = new Map<string, number>();
function countCalls(client: DynamoDBClient | SQSClient, service: string, onlyDelivering = false): void {
  (client.middlewareStack as DynamoDBClient['middlewareStack']).add(
    (next, context) => async (args) => {
      const output = await next(args);
      const command = String(context.commandName).replace(/Command$/, '');
      // The mapping's empty long polls are made whether or not tasks run: only receives that delivered count.
      const delivered = (output.output as { Messages?: unknown[] }).Messages?.length ?? 0;
      if (!(onlyDelivering && command === 'ReceiveMessage' && delivered === 0)) {
        const key = `${service}.${command}`;
        calls.set(key, (calls.get(key) ?? 0) + 1);
      }
      return output;
    },
    { step: 'initialize', name: 'load-bench-count' },
  );
}

// --- the stack --------------------------------------------------------------------------

const dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-load-'));
const timeQueued: number[] = [];
let logBytes = 0;
const stack = await startLocalStack({
  port: 0,
  dataDir,
  // `npm start`'s defaults: its environment with the `all` toolset (slow_compute), nothing tuned.
  env: { ...process.env, [ENV.toolset]: 'all' },
  log: jsonLog((line) => {
    logBytes += Buffer.byteLength(line);
    if (line.includes('"event":"task-started"')) timeQueued.push(Number((JSON.parse(line) as { TimeQueued: number }).TimeQueued));
  }),
  instrument: ({ dynamodb, sqs, poller }) => {
    countCalls(dynamodb, 'DynamoDB');
    countCalls(sqs, 'SQS');
    countCalls(poller, 'SQS(mapping)', true);
  },
});

// --- the load ---------------------------------------------------------------------------

const getLatencies: number[] = [];
const createLatencies: number[] = [];
let pollCount = 0;
let completed = 0;
const failures = new Map<string, number>();
const fail = (what: string) => failures.set(what, (failures.get(what) ?? 0) + 1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One client: creates a task, then polls it at the interval it is told until it is terminal. */
async function client(deadline: number): Promise<void> {
  const started = performance.now();
  const created = await rpc(stack.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: TASK_SECONDS } });
  createLatencies.push(performance.now() - started);
  const taskId = created.body?.result?.['taskId'];
  if (typeof taskId !== 'string') return void fail(`tools/call ${created.status}`);
  let interval = Number(created.body?.result?.['pollIntervalMs'] ?? 1000);
  while (Date.now() < deadline) {
    await sleep(interval);
    const before = performance.now();
    const got = await rpc(stack.url, 'tasks/get', { taskId });
    getLatencies.push(performance.now() - before);
    pollCount += 1;
    const status = got.body?.result?.['status'];
    if (status === 'completed') {
      completed += 1;
      return;
    }
    if (status !== 'working') return void fail(`tasks/get ${got.status} ${String(status ?? got.body?.error?.code)}`);
    interval = Number(got.body?.result?.['pollIntervalMs'] ?? interval);
  }
  fail('not finished in time');
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 1000 });
await session.post('Profiler.start');
const cpuBefore = process.cpuUsage();
const wallStart = Date.now();

const clients: Promise<void>[] = [];
const total = Math.round(TPS * SECONDS);
for (let index = 0; index < total; index += 1) {
  // Open loop: task i starts at i / TPS seconds, whether or not earlier ones are done.
  const due = wallStart + (index * 1000) / TPS;
  const wait = due - Date.now();
  if (wait > 0) await sleep(wait);
  clients.push(client(wallStart + SECONDS * 1000 + DRAIN_MS));
}
await Promise.all(clients);

const cpu = process.cpuUsage(cpuBefore);
const wallMs = Date.now() - wallStart;
const { profile } = await session.post('Profiler.stop');
session.disconnect();
await stack.close();
await rm(dataDir, { recursive: true, force: true });

// --- the report -------------------------------------------------------------------------

type Part = 'mcp' | 'worker' | 'store+sdk' | 'emulators' | 'local plumbing' | 'load generator' | 'other';
const RULES: Array<[RegExp, Part]> = [
  [/\/test\/bench\/|\/test\/support\/|node:internal\/deps\/undici|undici/, 'load generator'],
  [/\/node_modules\/(dynalite|fauxqs|level|classic-level|abstract-level|memdown|fastify|@fastify|lazy|big\.js)/, 'emulators'],
  [/\/shared\/tasks\/|\/shared\/queue\/|\/functions\/lib\/|\/node_modules\/(@aws-sdk|@smithy|@aws-crypto|fast-xml-parser)\//, 'store+sdk'],
  [/\/functions\/mcp\/|\/shared\/protocol\/|\/shared\/auth\/|\/node_modules\/(@modelcontextprotocol|zod|jose)\//, 'mcp'],
  [/\/functions\/worker\/|\/shared\/runtime\/|\/functions\/fixtures\/|\/functions\/tools\//, 'worker'],
  [/\/bin\/local\//, 'local plumbing'],
];
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const partOf = new Map<number, Part>();
function classify(id: number): Part {
  const known = partOf.get(id);
  if (known) return known;
  const node = byId.get(id)!;
  const rule = RULES.find(([pattern]) => pattern.test(node.callFrame.url));
  const from = parent.get(id);
  const part = rule ? rule[1] : from === undefined ? 'other' : classify(from);
  partOf.set(id, part);
  return part;
}
const cpuMs = new Map<Part, number>();
const samples = profile.samples ?? [];
const deltas = profile.timeDeltas ?? [];
for (let index = 0; index < samples.length; index += 1) {
  const node = byId.get(samples[index]!)!;
  if (node.callFrame.functionName === '(idle)' || node.callFrame.functionName === '(program)') continue;
  const part = node.callFrame.functionName === '(garbage collector)' ? 'other' : classify(node.id);
  cpuMs.set(part, (cpuMs.get(part) ?? 0) + (deltas[index] ?? 0) / 1000);
}

const quantile = (values: number[], q: number) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const ms = (value: number) => `${value.toFixed(1)} ms`;
const created = createLatencies.length;
const pollsPerTask = pollCount / Math.max(1, created);
const perTaskCalls = [...calls].map(([key, n]) => `${key} ${(n / Math.max(1, created)).toFixed(2)}`).join(', ');

// The store and SDK's CPU goes to the functions in proportion to the AWS calls each makes per task (the model's counts).
const model = perTask({ tasksPerSecond: TPS, taskSeconds: TASK_SECONDS, pollsPerTask, inputRounds: 0, steps: 0, waitingShare: 0 });
const mcpCalls = 1 + 1 + pollsPerTask; // create's PutItem and SendMessage, one GetItem per poll
const workerCalls = model.ddbWrites + model.ddbReads - pollsPerTask - 1 + 2; // the rest of DynamoDB, plus the mapping's receive and delete
const shared = cpuMs.get('store+sdk') ?? 0;
const mcpCpu = (cpuMs.get('mcp') ?? 0) + (shared * mcpCalls) / (mcpCalls + workerCalls);
const workerCpu = (cpuMs.get('worker') ?? 0) + (shared * workerCalls) / (mcpCalls + workerCalls);
const perTaskMs = (value: number) => ms(value / Math.max(1, created));

const lines = [
  '',
  `Load run on the local stack (npm start settings): ${TPS} tasks/s for ${SECONDS} s, slow_compute of ${TASK_SECONDS} s, polled at the ` +
    `suggested pollIntervalMs`,
  '',
  `- tasks: ${created} created, ${completed} completed, in ${(wallMs / 1000).toFixed(1)} s; failures: ${failures.size ? [...failures].map(([what, n]) => `${what} ×${n}`).join(', ') : 'none'}`,
  `- polls per task: ${pollsPerTask.toFixed(2)} (the model's reference workload assumes 10)`,
  `- tools/call latency p50 ${ms(quantile(createLatencies, 0.5))}, p99 ${ms(quantile(createLatencies, 0.99))}`,
  `- tasks/get latency p50 ${ms(quantile(getLatencies, 0.5))}, p99 ${ms(quantile(getLatencies, 0.99))} (${getLatencies.length} calls)`,
  `- time to start (created → claimed by a worker) p50 ${ms(quantile(timeQueued, 0.5))}, p99 ${ms(quantile(timeQueued, 0.99))} ` +
    `(${timeQueued.length} starts)`,
  `- CPU per task (sampled): MCP function ${perTaskMs(mcpCpu)}, worker ${perTaskMs(workerCpu)} (besides the tool's own ${TASK_SECONDS} ` +
    `s of waiting); ` +
    `emulators ${perTaskMs(cpuMs.get('emulators') ?? 0)}, local plumbing ${perTaskMs(cpuMs.get('local plumbing') ?? 0)}, load ` +
    `generator ${perTaskMs(cpuMs.get('load generator') ?? 0)}, ` +
    `GC and unattributed ${perTaskMs(cpuMs.get('other') ?? 0)}; of the functions' share, store + AWS SDK ${perTaskMs(shared)} (split ` +
    `by AWS calls)`,
  `- CPU per task, whole process (getrusage): ${perTaskMs((cpu.user + cpu.system) / 1000)}`,
  `- MCP CPU per request: ${ms(mcpCpu / Math.max(1, created + pollCount))} (the model assumes ${ASSUMED.mcpMs} ms billed per request); ` +
    `worker CPU per run: ${ms(workerCpu / Math.max(1, completed))} (assumed ${ASSUMED.workerMs} ms besides the tool)`,
  `- AWS calls per task, counted: ${perTaskCalls}`,
  `- the model for this workload: ${model.ddbWrites} DynamoDB writes, ${model.ddbReads} reads, ${model.sqsRequests} SQS requests, ` +
    `${model.workerRuns} worker run per task`,
  `- function log bytes per task: ${Math.round(logBytes / Math.max(1, created))}`,
];
console.log(lines.join('\n'));
if (failures.size > 0) process.exitCode = 1;
