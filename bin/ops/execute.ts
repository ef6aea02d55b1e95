/** Runs the operator commands of `cli.ts` against a stack's table and queues (`ops.ts`). */
import { readFile } from 'node:fs/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_OUTPUTS, OPS_OUTPUTS } from '../../infra/outputs.ts';
import { loadConfig } from '../../shared/config.ts';
import { formatDuration } from '../../shared/durations.ts';
import { type ExecutionInspection, Ops, type TaskInspection, type TaskSummary, table } from './ops.ts';
import { waterfall } from './trace.ts';

/** The options every operator command takes, as commander parses them. */
export interface OpsOptions {
  outputs?: string;
  stack?: string;
  json?: boolean;
  limit?: string;
  olderThan?: string;
  reason?: string;
}

/** `90s`, `15m`, `2h`, `7d`, or milliseconds. */
function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new Error(`Not a duration: "${text}" (e.g. 90s, 15m, 2h, 7d)`);
  const size = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms']!;
  return Math.round(Number(match[1]) * size);
}

/** The outputs of one stack in a CDK outputs file (`{ "<stack>": { "<output>": "<value>" } }`). */
async function stackOutputs(file: string, stack: string | undefined): Promise<Record<string, string>> {
  const all = JSON.parse(await readFile(file, 'utf8')) as Record<string, Record<string, string>>;
  const name = stack ?? Object.keys(all).find((key) => OPS_OUTPUTS.tableName in (all[key] ?? {}));
  const outputs = name === undefined ? undefined : all[name];
  if (!outputs)
    throw new Error(
      `${file} has no stack${stack ? ` "${stack}"` : ''} with an ${OPS_OUTPUTS.tableName} output (deploy this version of the stack first)`,
    );
  return outputs;
}

/** An {@link Ops} over the stack named by `outputs` (a deployed one, or `npm start`'s with its emulators' endpoints), and its clients to close. */
function connect(outputs: Record<string, string>): { ops: Ops; close(): void } {
  const required = (key: string) => {
    const value = outputs[key];
    if (!value) throw new Error(`The stack outputs lack ${key}`);
    return value;
  };
  const region = outputs[LOCAL_OUTPUTS.region];
  const dynamodbEndpoint = outputs[LOCAL_OUTPUTS.dynamodbEndpoint];
  const sqsEndpoint = outputs[LOCAL_OUTPUTS.sqsEndpoint];
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const dynamodb = new DynamoDBClient({
    ...(region ? { region } : {}),
    ...(dynamodbEndpoint === undefined ? {} : { endpoint: dynamodbEndpoint, credentials }),
  });
  const sqs = new SQSClient({
    useQueueUrlAsEndpoint: false,
    ...(region ? { region } : {}),
    ...(dynamodbEndpoint === undefined ? {} : { ...(sqsEndpoint === undefined ? {} : { endpoint: sqsEndpoint }), credentials }),
  });
  const close = () => {
    dynamodb.destroy();
    sqs.destroy();
  };
  try {
    const config = loadConfig({
      ...process.env,
      TASKS_TABLE_NAME: required(OPS_OUTPUTS.tableName),
      TASKS_QUEUE_URL: required(OPS_OUTPUTS.queueUrl),
      // Stacks deployed before the setting have no such output: they wrote the default count.
      ...(outputs[OPS_OUTPUTS.activeIndexShards] ? { TASKS_ACTIVE_INDEX_SHARDS: outputs[OPS_OUTPUTS.activeIndexShards] } : {}),
    });
    const ops = new Ops({
      dynamodb,
      sqs,
      tableName: config.tableName,
      queueUrl: config.queueUrl,
      deadLetterQueueUrl: required(OPS_OUTPUTS.deadLetterQueueUrl),
      policy: config,
      // Deployed (no local endpoints), a task's trace is linked to the region's X-Ray console.
      ...(region && dynamodbEndpoint === undefined ? { traceRegion: region } : {}),
    });
    return { ops, close };
  } catch (error) {
    close();
    throw error;
  }
}

/** `inspect`'s table: one row per field the task has, durations in words. */
function inspection(found: TaskInspection): string {
  const fields = {
    ...found,
    ageMs: formatDuration(found.ageMs, { approximate: true }),
    ttlMs: formatDuration(found.ttlMs, { approximate: true }),
    lease: found.lease ? `${found.lease.owner} until ${found.lease.until} (${found.lease.live ? 'live' : 'expired'})` : undefined,
    nextSweep: found.nextSweep
      ? `${found.nextSweep.at} (in ${formatDuration(found.nextSweep.inMs, { approximate: true })}): ${found.nextSweep.action}`
      : undefined,
    waitingForInput: found.waitingForInput?.join(', '),
    decisions: found.decisions
      ? Object.entries(found.decisions)
          .map(([key, d]) => `${key}: ${d.name ?? d.by} (${d.as}, ${d.via}) at ${d.at}`)
          .join('; ')
      : undefined,
    steps: found.steps.length === 0 ? '(none)' : found.steps.join(', '),
    execution: found.execution ? `${found.execution.name} (${found.execution.arn})` : undefined,
    executionStatus: found.execution ? executionStatus(found.execution) : undefined,
    openQuestions: found.execution ? found.execution.openQuestions.join(', ') || '(none)' : undefined,
    progress: found.execution?.progress,
  };
  const rows = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([field, value]) => ({ field, value }));
  return table(rows, ['field', 'value']);
}

/** An execution's status as the row records it, with how it failed. */
function executionStatus(execution: ExecutionInspection): string {
  const how = [execution.error, execution.cause].filter((part) => part !== undefined).join(': ');
  const said = execution.status === 'RUNNING' ? ' (no end recorded)' : execution.status === 'UNKNOWN' ? ' (the task ended first)' : '';
  return `${execution.status}${said}${how ? `: ${how}` : ''}`;
}

/** `working`'s and `waiting`'s table: one row per task, ages in words. */
function summaries(tasks: TaskSummary[]): string {
  return table(
    tasks.map((t) => ({
      ...t,
      age: formatDuration(t.ageMs, { approximate: true }),
      waiting: t.waitingMs === undefined ? undefined : formatDuration(t.waitingMs, { approximate: true }),
      running: t.running ? 'yes' : 'no',
    })),
    ['taskId', 'tool', 'age', ...(tasks.some((t) => t.waitingMs !== undefined) ? ['waiting'] : []), 'attempts', 'running', 'nextSweepAt'],
  );
}

/** What one command reads of its arguments: the task id and the reason (each required by the commands that use it), the limit. */
interface CommandInput {
  command: string;
  taskId(): string;
  reason(): string;
  limit: number;
  olderThan: string;
  /** Writes `value` as JSON with `--json`, else the text. */
  out(value: unknown, text: () => string): void;
}

/** Runs one command; resolves to its exit code. */
async function run(ops: Ops, input: CommandInput): Promise<number> {
  const { command, out, limit } = input;
  switch (command) {
    case 'inspect': {
      const found = await ops.inspect(input.taskId());
      if (!found) {
        out({ taskId: input.taskId(), found: false }, () => `No task ${input.taskId()}`);
        return 1;
      }
      out(found, () => inspection(found));
      return 0;
    }
    case 'trace': {
      const timeline = await ops.trace(input.taskId());
      if (!timeline) {
        out({ taskId: input.taskId(), found: false }, () => `No task ${input.taskId()}`);
        return 1;
      }
      out(timeline, () => waterfall(timeline));
      return 0;
    }
    case 'working':
    case 'waiting': {
      const tasks = command === 'working' ? await ops.working(limit) : await ops.waiting(parseDuration(input.olderThan), limit);
      out(tasks, () => summaries(tasks));
      return 0;
    }
    case 'cancel':
    case 'fail': {
      const result =
        command === 'cancel' ? await ops.cancel(input.taskId(), input.reason()) : await ops.fail(input.taskId(), input.reason());
      out(result, () => `${result.taskId}: ${result.outcome}${result.reason ? ` (${result.reason})` : ''}`);
      return result.outcome === 'unchanged' ? 1 : 0;
    }
    case 'redrive': {
      const result = await ops.redrive(limit);
      out(result, () => `Moved ${result.moved} message(s) back to the task queue${result.moved ? `: ${result.taskIds.join(', ')}` : ''}`);
      return 0;
    }
    default:
      throw new Error(`Unknown command "${command}"`);
  }
}

/** Runs `command` against the stack named by `--outputs` (and `--stack`), writing what it prints to `write`; resolves to the exit code. */
export async function execute(
  command: string,
  id: string | undefined,
  options: OpsOptions,
  write: (text: string) => void,
): Promise<number> {
  const json = options.json === true;
  const { ops, close } = connect(await stackOutputs(options.outputs ?? 'cdk-outputs.json', options.stack));
  try {
    return await run(ops, {
      command,
      taskId: () => id || fail(`${command} needs a task id`),
      reason: () => options.reason || fail(`${command} needs --reason "<why>"`),
      limit: Number(options.limit ?? 50),
      olderThan: options.olderThan ?? '0',
      out: (value, text) => write(`${json ? JSON.stringify(value, null, 2) : text()}\n`),
    });
  } finally {
    close();
  }
}

function fail(message: string): never {
  throw new Error(message);
}
