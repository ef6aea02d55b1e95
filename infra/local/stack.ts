import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ENV } from '../../shared/config.ts';
import { ensureTaskTable, startDynalite } from './dynamodb.ts';
import { startHttpAdapter } from './http.ts';
import { startPoller, type Poller } from './poller.ts';
import { LOCAL_CREDENTIALS, localSqsClient, startLocalSqs } from './sqs.ts';

export interface LocalStackOptions {
  /** HTTP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** Where dynalite keeps the table (under `<dataDir>/dynamodb`), so tasks survive a restart. */
  dataDir: string;
  tableName?: string;
  /** Receives before a task message is dead-lettered (default 3). */
  maxReceiveCount?: number;
  /** Visibility timeout of the task queue; a failed record is retried after it (default 30 s). */
  visibilityTimeoutSeconds?: number;
  /** How long `close()` waits for a batch still being handled (default 5 s). */
  drainMs?: number;
  log?: (event: Record<string, unknown>) => void;
  /** How often the sweeper runs (it also runs once at start-up); default 30 s. */
  sweepIntervalMs?: number;
  /** Called with the SQS client standing in for the event source mappings (benchmarks count its calls). */
  instrumentPollerClient?: (client: SQSClient) => void;
}

export interface LocalStack {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  close(): Promise<void>;
}

const REGION = 'us-east-1';

/**
 * Runs the unchanged Lambda handlers on this machine: dynalite for DynamoDB,
 * fauxqs for SQS, an HTTP API adapter for the MCP function and two pollers
 * standing in for the event source mappings of the worker and the DLQ
 * function. Only endpoint URLs differ from AWS.
 *
 * The functions read their configuration from the environment when first
 * imported (`functions/lib/deps.ts`), so this sets the environment and then
 * imports them: one stack per process.
 *
 * Persistence is uneven: the table is on disk, the queues are in fauxqs'
 * memory. After a restart, finished tasks are still readable, but a task whose
 * message was queued or in flight at shutdown stays `working` until something
 * re-enqueues it (the sweeper, on AWS).
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const log = options.log ?? (() => {});
  const tableName = options.tableName ?? 'tasks';
  const cleanup: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  };

  try {
    const dbPath = join(resolve(options.dataDir), 'dynamodb');
    await mkdir(dbPath, { recursive: true });
    cleanup.push(await lockDataDir(resolve(options.dataDir)));
    const dynamo = await startDynalite({ path: dbPath });
    cleanup.push(dynamo.close);
    const admin = new DynamoDBClient({ endpoint: dynamo.endpoint, region: REGION, credentials: LOCAL_CREDENTIALS });
    try {
      await ensureTaskTable(admin, tableName);
    } finally {
      admin.destroy();
    }

    const sqs = await startLocalSqs({
      region: REGION,
      maxReceiveCount: options.maxReceiveCount ?? 3,
      visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 30,
    });
    cleanup.push(sqs.close);

    Object.assign(process.env, {
      [ENV.tableName]: tableName,
      [ENV.queueUrl]: sqs.queueUrl,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_REGION: REGION,
    });
    process.env[ENV.toolset] ||= 'all';
    process.env[ENV.redeliveryMs] = String((options.visibilityTimeoutSeconds ?? 30) * 1000);
    // The emulators ignore credentials, but the SDK's provider chain needs some.
    process.env.AWS_ACCESS_KEY_ID ||= LOCAL_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY ||= LOCAL_CREDENTIALS.secretAccessKey;

    const [mcp, worker, dlq, sweeper] = await Promise.all([
      import('../../functions/mcp/handler.ts'),
      import('../../functions/worker/handler.ts'),
      import('../../functions/dlq/handler.ts'),
      import('../../functions/sweeper/handler.ts'),
    ]);

    // The event source mappings: the poller's own client, not the functions'.
    const sqsClient = localSqsClient(sqs.endpoint, REGION);
    options.instrumentPollerClient?.(sqsClient);
    cleanup.push(async () => sqsClient.destroy());
    const pollers: Poller[] = [
      startPoller({ client: sqsClient, queueUrl: sqs.queueUrl, queueArn: sqs.queueArn, region: REGION, handler: worker.handler, log }),
      startPoller({ client: sqsClient, queueUrl: sqs.dlqUrl, queueArn: sqs.dlqArn, region: REGION, handler: dlq.handler, log }),
    ];
    // A batch still running at shutdown is abandoned after `drainMs`; its
    // task's lease expires and the task is picked up again later.
    const drainMs = options.drainMs ?? 5000;
    cleanup.push(() => withTimeout(Promise.all(pollers.map((poller) => poller.stop())), drainMs));

    // The scheduled sweeper: once now, since the queues did not survive a
    // restart but unfinished tasks in the table did, then periodically.
    const runSweeper = () =>
      sweeper.handler().then(
        ({ requeued }) => requeued > 0 && log({ event: 'sweep', requeued }),
        (error: unknown) => log({ event: 'sweep-error', error: error instanceof Error ? error.name : 'unknown' }),
      );
    await runSweeper();
    const sweepTimer = setInterval(runSweeper, options.sweepIntervalMs ?? 30_000);
    cleanup.push(async () => clearInterval(sweepTimer));

    const http = await startHttpAdapter({ handler: mcp.handler, port: options.port, log });
    cleanup.push(http.close);
    return { url: http.url, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Claims the data directory for this process. LevelDB allows one opener, and
 * dynalite turns a second one into an uncaught "Database is closed" on the
 * first request; this says what is wrong instead.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = join(dataDir, 'local-stack.pid');
  const holder = Number(await readFile(file, 'utf8').catch(() => ''));
  if (holder && holder !== process.pid && isRunning(holder)) {
    throw new Error(`${dataDir} is in use by another local stack (pid ${holder}); stop it or set LOCAL_DATA_DIR`);
  }
  await writeFile(file, String(process.pid));
  return () => rm(file, { force: true });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function withTimeout(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
