import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';

/** A running fauxqs (SQS API) on 127.0.0.1 with the task queue and its dead-letter queue. */
export interface LocalSqs {
  /** Where SQS clients send requests (`AWS_ENDPOINT_URL_SQS`). */
  endpoint: string;
  region: string;
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  dlqArn: string;
  close(): Promise<void>;
}

export interface LocalSqsOptions {
  queueName?: string;
  dlqName?: string;
  /** Receives before a message moves to the dead-letter queue (the stack's `maxReceiveCount`). */
  maxReceiveCount?: number;
  /** How long a received message stays invisible; a failed record reappears after this. */
  visibilityTimeoutSeconds?: number;
  region?: string;
  /** Its port on 127.0.0.1 (default: a free one). */
  port?: number;
}

/** Credentials fauxqs accepts (it reads only the region from the signature). */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/**
 * Starts fauxqs in this process and creates the task queue with a redrive
 * policy to its dead-letter queue, as the CDK stack declares them.
 *
 * fauxqs keeps queues in memory: after a restart both queues are empty (tasks
 * in the table persist; a task whose message was lost stays `working` until
 * the sweeper re-enqueues it).
 *
 * Queue URLs name the host `sqs.<region>.localhost`, which does not resolve.
 * fauxqs looks queues up by that exact URL string, so the URL is kept as is and
 * clients send to {@link LocalSqs.endpoint} instead: the functions' client sets
 * `useQueueUrlAsEndpoint: false` (see `functions/lib/sqs.ts`) and the local
 * admin/poller clients set an explicit `endpoint`, which the SDK honours.
 */
export async function startLocalSqs(options: LocalSqsOptions = {}): Promise<LocalSqs> {
  const region = options.region ?? 'us-east-1';
  const queueName = options.queueName ?? 'tasks';
  const dlqName = options.dlqName ?? `${queueName}-dlq`;
  const maxReceiveCount = options.maxReceiveCount ?? 3;
  const visibilityTimeout = String(options.visibilityTimeoutSeconds ?? 30);

  // buildApp + listen on loopback: fauxqs' own startFauxqs/CLI bind 0.0.0.0.
  const app = buildApp({ logger: false, defaultRegion: region });
  const endpoint = await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const client = localSqsClient(endpoint, region);
  try {
    const dlqUrl = await createQueue(client, dlqName, {
      VisibilityTimeout: visibilityTimeout,
      MessageRetentionPeriod: String(14 * 24 * 3600),
    });
    const dlqArn = await queueArn(client, dlqUrl);
    const queueUrl = await createQueue(client, queueName, {
      VisibilityTimeout: visibilityTimeout,
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount }),
    });
    return {
      endpoint,
      region,
      queueUrl,
      queueArn: await queueArn(client, queueUrl),
      dlqUrl,
      dlqArn,
      close: async () => {
        client.destroy();
        // Long polls waiting inside fauxqs are released by its preClose hook.
        await app.close();
      },
    };
  } catch (error) {
    client.destroy();
    await app.close();
    throw error;
  }
}

/** An SQS client for the local endpoint, independent of the process environment. */
export function localSqsClient(endpoint: string, region: string): SQSClient {
  return new SQSClient({ endpoint, region, credentials: LOCAL_CREDENTIALS });
}

async function createQueue(client: SQSClient, name: string, attributes: Record<string, string>): Promise<string> {
  const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!QueueUrl) throw new Error(`fauxqs returned no URL for queue ${name}`);
  return QueueUrl;
}

async function queueArn(client: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  const arn = Attributes?.QueueArn;
  if (!arn) throw new Error(`fauxqs returned no ARN for ${queueUrl}`);
  return arn;
}
