/**
 * What tracing costs: the MCP function's and the worker's bundles built as
 * the stack builds them with tracing off and on (bytes, and the CPU time of
 * a cold `import()` in a fresh process, median of N), and per simple task the
 * spans it makes and their size as OTLP protobuf (what X-Ray's Transaction
 * Search bills as ingested bytes; without it, X-Ray bills the one trace).
 * Numbers, not pass or fail: `npx tsx test/bench/tracing.ts`.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { build } from 'esbuild';
import * as z from 'zod';
import { productTools } from '../../functions/tools/index.ts';
import { TOOLSET_SOURCES } from '../../infra/app.ts';
import { FunctionCode } from '../../infra/constructs/function-code.ts';
import { bundlingFor } from '../../infra/constructs/task-function.ts';
import { PRICE } from '../../infra/prices.ts';
import { DEFAULT_SETTINGS, ENV } from '../../shared/config.ts';
import { createEndpoint } from '../../shared/protocol/endpoint.ts';
import { InMemoryTaskQueue } from '../../shared/queue/memory-queue.ts';
import { settingStoresOf } from '../../shared/runtime/settings.ts';
import { defineTool } from '../../shared/runtime/tool.ts';
import { processTaskMessage } from '../../shared/runtime/worker.ts';
import { InMemoryTaskStore } from '../../shared/tasks/memory/index.ts';
import { otelTracing } from '../../shared/tracing/otel/index.ts';
import { storePolicy } from '../support/factories.ts';
import { resultOf, rpc } from '../support/wire.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUNS = Number(process.env['BENCH_BUNDLE_RUNS'] ?? 9);
const NODE = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
const BUNDLING = bundlingFor(settingStoresOf(productTools));
const ENVIRONMENT = {
  PATH: process.env['PATH'] ?? '',
  AWS_REGION: 'us-east-1',
  NODE_OPTIONS: '--enable-source-maps',
  [ENV.tableName]: 'placeholder-table',
  [ENV.queueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/placeholder-queue',
  [ENV.stackSecretParameter]: '/placeholder/request-state-key',
  [ENV.publicUrl]: 'https://placeholder.execute-api.us-east-1.amazonaws.com',
};
const PROBE = `
const cpu = process.cpuUsage();
const module = await import(process.argv[1]);
const used = process.cpuUsage(cpu);
if (typeof module.handler !== 'function') process.exit(2);
process.stdout.write(String((used.user + used.system) / 1000));
`;

async function bundled(entry: string, outfile: string): Promise<number> {
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: BUNDLING.format === 'esm' ? 'esm' : 'cjs',
    target: BUNDLING.target ?? 'node22',
    minify: BUNDLING.minify ?? false,
    sourcemap: BUNDLING.sourceMap ?? false,
    ...(BUNDLING.mainFields ? { mainFields: BUNDLING.mainFields } : {}),
    ...(BUNDLING.banner ? { banner: { js: BUNDLING.banner } } : {}),
    ...(BUNDLING.define ? { define: BUNDLING.define } : {}),
    absWorkingDir: ROOT,
    outfile,
    logLevel: 'silent',
  });
  return statSync(outfile).size;
}

function coldStartCpuMs(file: string, env: Record<string, string>): number {
  const child = spawnSync(NODE, ['--input-type=module', '-e', PROBE, pathToFileURL(file).href], {
    cwd: join(file, '..'),
    env: { ...ENVIRONMENT, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (child.status !== 0) throw new Error(`${file} failed to start:\n${child.stderr}`);
  return Number(child.stdout);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;

async function bundles(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-tracing-bench-'));
  try {
    // A project of its own for the generated entries (a real node_modules/.cache, whatever this checkout's node_modules is).
    mkdirSync(join(dir, 'node_modules'));
    copyFileSync(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
    const off = new FunctionCode({ tools: TOOLSET_SOURCES.product, projectRoot: dir });
    const on = new FunctionCode({ tools: TOOLSET_SOURCES.product, projectRoot: dir, tracing: true });
    console.log('| function | bundle off | bundle on | growth | cold start CPU off | on | growth |');
    console.log('|---|---|---|---|---|---|---|');
    for (const fn of ['mcp', 'worker'] as const) {
      const offFile = join(dir, `${fn}-off.mjs`);
      const onFile = join(dir, `${fn}-on.mjs`);
      const [offBytes, onBytes] = [await bundled(off.entry(fn), offFile), await bundled(on.entry(fn), onFile)];
      const offTimes: number[] = [];
      const onTimes: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        offTimes.push(coldStartCpuMs(offFile, {}));
        onTimes.push(coldStartCpuMs(onFile, { TASKS_TRACING: 'xray' }));
      }
      const [a, b] = [median(offTimes), median(onTimes)];
      console.log(
        `| ${fn} | ${kb(offBytes)} | ${kb(onBytes)} | +${kb(onBytes - offBytes)} (${((onBytes / offBytes - 1) * 100).toFixed(0)} %) | ` +
          `${a.toFixed(0)} ms | ${b.toFixed(0)} ms | +${(b - a).toFixed(0)} ms |`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A simple task (one step) through the endpoint and the worker, traced: its spans and their OTLP size. */
async function perTask(): Promise<void> {
  const exporter = new InMemorySpanExporter();
  const tracing = otelTracing({ exporter });
  const store = new InMemoryTaskStore(storePolicy());
  const queue = new InMemoryTaskQueue();
  const simple = defineTool({
    name: 'simple',
    description: '',
    inputSchema: z.object({}),
    execution: 'task',
    handler: async (_args, ctx) => `fetched ${await ctx.step('fetch', async () => 42)}`,
  });
  const tools = new Map([[simple.name, simple]]);
  const secret = new Uint8Array(32).fill(7);
  const base = { store, queue, tools, log: () => {}, tracing };
  const endpoint = createEndpoint({
    ...base,
    config: DEFAULT_SETTINGS,
    stackSecret: async () => secret,
    originPolicy: { kind: 'loopback' },
  });
  const target = (request: Request) => endpoint.fetch(request, 'alice');
  const created = resultOf(await rpc(target, 'tools/call', { name: 'simple', arguments: {} }));
  const taskId = String((created['task'] as { taskId?: string } | undefined)?.taskId ?? created['taskId']);
  while (queue.sent.length > 0) await processTaskMessage(queue.sent.shift()!, { ...base, config: DEFAULT_SETTINGS });
  // A polling client's tasks/get: sampled out by default, so no span.
  await rpc(target, 'tasks/get', { taskId });
  const spans = exporter.getFinishedSpans();
  const bytes = ProtobufTraceSerializer.serializeRequest(spans)?.byteLength ?? 0;
  const traces = new Set(spans.map((span) => span.spanContext().traceId)).size;
  console.log(
    `\nPer simple task: ${spans.length} spans (${spans.map((s) => s.name).join(', ')}) in ${traces} trace(s), ${bytes} bytes as OTLP protobuf.`,
  );
  console.log(
    `X-Ray without Transaction Search: ${traces} trace recorded, $${(traces * PRICE.xrayTrace * 1e6).toFixed(2)} per million tasks.`,
  );
  console.log(
    `Transaction Search: ${((bytes * 1e6) / 1024 ** 3).toFixed(2)} GB of spans per million tasks, at its per-GB ingestion price.`,
  );
}

await bundles();
await perTask();
