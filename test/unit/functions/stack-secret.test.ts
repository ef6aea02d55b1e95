/** The custom resource that creates the stack's secret (`functions/stack-secret/app.ts`) against a fake SSM client. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeleteParameterCommand, ParameterAlreadyExists, ParameterNotFound, PutParameterCommand } from '@aws-sdk/client-ssm';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { createStackSecretHandler, PARAMETER_NAME_PROPERTY, STACK_SECRET_BYTES } from '../../../functions/stack-secret/app.ts';
import type { LogEvent } from '../../../shared/log.ts';

const NAME = '/McpTasks/request-state-key';

function event(RequestType: 'Create' | 'Update' | 'Delete'): CloudFormationCustomResourceEvent {
  return {
    RequestType,
    ServiceToken: 'arn:aws:lambda:us-east-1:000000000000:function:stack-secret',
    ResponseURL: 'https://cloudformation-custom-resource-response.example/abc',
    StackId: 'arn:aws:cloudformation:us-east-1:000000000000:stack/McpTasks/1',
    RequestId: 'request-1',
    LogicalResourceId: 'StateKey',
    ResourceType: 'Custom::StateKey',
    ResourceProperties: { ServiceToken: 'x', [PARAMETER_NAME_PROPERTY]: NAME },
    ...(RequestType === 'Create' ? {} : { PhysicalResourceId: NAME, OldResourceProperties: {} }),
  } as CloudFormationCustomResourceEvent;
}

function run(request: 'Create' | 'Update' | 'Delete', fail?: Error) {
  const sent: unknown[] = [];
  const responses: Array<{ url: string; body: Record<string, unknown> }> = [];
  const logs: LogEvent[] = [];
  const handler = createStackSecretHandler({
    ssm: {
      send: async (command: unknown) => {
        sent.push(command);
        if (fail) throw fail;
        return {};
      },
    } as never,
    log: (line) => void logs.push(line),
    respond: async (url, body) => void responses.push({ url, body: JSON.parse(body) as Record<string, unknown> }),
  });
  return handler(event(request)).then(() => ({ sent, responses, logs }));
}

describe('the requestState key custom resource', () => {
  for (const request of ['Create', 'Update'] as const) {
    it(`${request}: writes a SecureString of ${STACK_SECRET_BYTES} random bytes, never over an existing one, and answers SUCCESS`, async () => {
      const { sent, responses } = await run(request);
      assert.equal(sent.length, 1);
      const put = sent[0] as PutParameterCommand;
      assert.ok(put instanceof PutParameterCommand);
      assert.equal(put.input.Name, NAME);
      assert.equal(put.input.Type, 'SecureString');
      assert.equal(put.input.Overwrite, false);
      assert.equal(Buffer.from(String(put.input.Value), 'base64').length, STACK_SECRET_BYTES);
      assert.deepEqual(responses[0]?.body, {
        Status: 'SUCCESS',
        Reason: 'OK',
        PhysicalResourceId: NAME,
        StackId: event('Create').StackId,
        RequestId: 'request-1',
        LogicalResourceId: 'StateKey',
      });
      assert.equal(responses[0]?.url, event('Create').ResponseURL);
    });
  }

  it('an existing key is kept: ParameterAlreadyExists is a success', async () => {
    const { responses } = await run('Update', new ParameterAlreadyExists({ message: 'exists', $metadata: {} }));
    assert.equal(responses[0]?.body['Status'], 'SUCCESS');
  });

  it('Delete removes the parameter; one already gone is a success', async () => {
    const removed = await run('Delete');
    assert.ok(removed.sent[0] instanceof DeleteParameterCommand);
    const gone = await run('Delete', new ParameterNotFound({ message: 'gone', $metadata: {} }));
    assert.equal(gone.responses[0]?.body['Status'], 'SUCCESS');
  });

  it('any other error answers FAILED, and the log has its name only', async () => {
    const denied = Object.assign(new Error('User arn:aws:iam::000000000000:role/x is not authorized'), { name: 'AccessDeniedException' });
    const { responses, logs } = await run('Create', denied);
    assert.equal(responses[0]?.body['Status'], 'FAILED');
    assert.equal(responses[0]?.body['Reason'], 'See the function log');
    assert.deepEqual(logs, [{ event: 'stack-secret-error', requestType: 'Create', error: 'AccessDeniedException' }]);
  });
});
