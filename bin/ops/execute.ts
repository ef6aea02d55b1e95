/** Runs the operator commands of `cli.ts` against a stack's table and queues (`ops.ts`). */
import { readFile } from 'node:fs/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_OUTPUTS, OPS_OUTPUTS } from '../../infra/outputs.ts';
import { loadConfig } from '../../shared/config.ts';
import { formatDuration } from '../../shared/durations.ts';
import { Ops, type TaskSummary, table } from './ops.ts';

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

export async function execute(
  command: string,
  id: string | undefined,
  options: OpsOptions,
  write: (text: string) => void,
): Promise<number> {
  const json = options.json === true;
  const out = (value: unknown, text: () => string) => write(`${json ? JSON.stringify(value, null, 2) : text()}\n`);
  const outputs = await stackOutputs(options.outputs ?? 'cdk-outputs.json', options.stack);
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
  });
  const limit = Number(options.limit ?? 50);
  const reason = () => {
    const text = options.reason;
    if (!text) throw new Error(`${command} needs --reason "<why>"`);
    return text;
  };
  const taskId = () => {
    if (!id) throw new Error(`${command} needs a task id`);
    return id;
  };
  const summaries = (tasks: TaskSummary[]) =>
    table(
      tasks.map((t) => ({
        ...t,
        age: formatDuration(t.ageMs, { approximate: true }),
        waiting: t.waitingMs === undefined ? undefined : formatDuration(t.waitingMs, { approximate: true }),
        running: t.running ? 'yes' : 'no',
      })),
      ['taskId', 'tool', 'age', ...(tasks.some((t) => t.waitingMs !== undefined) ? ['waiting'] : []), 'attempts', 'running', 'nextSweepAt'],
    );

  try {
    switch (command) {
      case 'inspect': {
        const found = await ops.inspect(taskId());
        if (!found) {
          out({ taskId: taskId(), found: false }, () => `No task ${taskId()}`);
          return 1;
        }
        out(found, () =>
          table(
            Object.entries({
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
            })
              .filter(([, value]) => value !== undefined)
              .map(([field, value]) => ({ field, value })),
            ['field', 'value'],
          ),
        );
        return 0;
      }
      case 'working': {
        const tasks = await ops.working(limit);
        out(tasks, () => summaries(tasks));
        return 0;
      }
      case 'waiting': {
        const tasks = await ops.waiting(parseDuration(options.olderThan ?? '0'), limit);
        out(tasks, () => summaries(tasks));
        return 0;
      }
      case 'cancel':
      case 'fail': {
        const result = command === 'cancel' ? await ops.cancel(taskId(), reason()) : await ops.fail(taskId(), reason());
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
  } finally {
    dynamodb.destroy();
    sqs.destroy();
  }
}
