/**
 * Lambda entry of the stack's `requestState` key custom resource: creates the
 * SSM SecureString (standard tier, AWS-managed `aws/ssm` key) holding 32
 * random bytes, base64-encoded, so the key never appears in a template, a
 * stack output or a log. CloudFormation invokes it directly; it answers
 * through the pre-signed response URL.
 */
import { randomBytes } from 'node:crypto';
import { DeleteParameterCommand, ParameterAlreadyExists, ParameterNotFound, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { errorName, jsonLog } from '../../shared/log.ts';

const ssm = new SSMClient({});
const log = jsonLog();

/** The custom resource's property naming the parameter. */
export const PARAMETER_NAME_PROPERTY = 'ParameterName';

export async function handler(event: CloudFormationCustomResourceEvent): Promise<void> {
  const name = String(event.ResourceProperties[PARAMETER_NAME_PROPERTY]);
  let status: 'SUCCESS' | 'FAILED' = 'SUCCESS';
  try {
    if (event.RequestType === 'Delete') {
      await ssm.send(new DeleteParameterCommand({ Name: name })).catch((error: unknown) => {
        if (!(error instanceof ParameterNotFound)) throw error;
      });
    } else {
      // An existing key is kept: updates of the stack do not rotate it (see docs/security.md).
      await ssm
        .send(
          new PutParameterCommand({
            Name: name,
            Type: 'SecureString',
            Tier: 'Standard',
            Value: randomBytes(32).toString('base64'),
            Overwrite: false,
          }),
        )
        .catch((error: unknown) => {
          if (!(error instanceof ParameterAlreadyExists)) throw error;
        });
    }
    log({ event: 'state-key', requestType: event.RequestType });
  } catch (error) {
    status = 'FAILED';
    log({ event: 'state-key-error', requestType: event.RequestType, error: errorName(error) });
  }
  const body = JSON.stringify({
    Status: status,
    Reason: status === 'FAILED' ? 'See the function log' : 'OK',
    PhysicalResourceId: name,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
  });
  await fetch(event.ResponseURL, {
    method: 'PUT',
    headers: { 'content-type': '', 'content-length': String(Buffer.byteLength(body)) },
    body,
  });
}
