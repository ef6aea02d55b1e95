/**
 * The local stack's emulators on pinned ports (`LOCAL_DYNAMODB_PORT`,
 * `LOCAL_SQS_PORT`, `LOCAL_STEPFUNCTIONS_PORT`): each answers its API on the
 * port it was given, through the real AWS SDK clients.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import type { LocalStack } from '../../bin/local/options.ts';
import { LOCAL_CREDENTIALS, localSqsClient } from '../../bin/local/sqs.ts';
import { startLocalStack } from '../../bin/local/stack.ts';

/** A port free a moment ago (the system picks it, then it is let go). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let stack: LocalStack | undefined;
let dataDir: string;
const ports = { dynamodb: 0, sqs: 0, stepFunctions: 0 };

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-ports-'));
  Object.assign(ports, { dynamodb: await freePort(), sqs: await freePort(), stepFunctions: await freePort() });
  // The product toolset has a workflow tool: the Step Functions emulator starts too.
  stack = await startLocalStack({ port: 0, dataDir, log: () => {}, emulatorPorts: ports, env: {} });
});

after(async () => {
  await stack?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('the emulators on pinned ports', () => {
  it('answer DynamoDB, SQS and Step Functions requests there', async () => {
    const at = (port: number) => ({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
    const dynamodb = new DynamoDBClient(at(ports.dynamodb));
    const sqs = localSqsClient(`http://127.0.0.1:${ports.sqs}`, 'us-east-1');
    const sfn = new SFNClient(at(ports.stepFunctions));
    try {
      assert.deepEqual((await dynamodb.send(new ListTablesCommand({}))).TableNames, ['tasks']);
      assert.ok((await sqs.send(new ListQueuesCommand({}))).QueueUrls?.some((url) => url.endsWith('/tasks')));
      // The emulator's own answer: an execution it never started.
      const unknown = 'arn:aws:states:us-east-1:000000000000:execution:none:none';
      await assert.rejects(sfn.send(new DescribeExecutionCommand({ executionArn: unknown })), (error: Error) =>
        /ExecutionDoesNotExist|StateMachineDoesNotExist/.test(error.name),
      );
    } finally {
      dynamodb.destroy();
      sqs.destroy();
      sfn.destroy();
    }
  });
});
