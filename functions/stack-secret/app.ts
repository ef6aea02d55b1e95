import { randomBytes } from 'node:crypto';
import {
  DeleteParameterCommand,
  ParameterAlreadyExists,
  ParameterNotFound,
  PutParameterCommand,
  type SSMClient,
} from '@aws-sdk/client-ssm';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { errorName, type Log } from '../../shared/log.ts';

/** The custom resource's property naming the parameter. */
export const PARAMETER_NAME_PROPERTY = 'ParameterName';

/** The stack's secret: 32 random bytes (256 bits), base64. */
export const STACK_SECRET_BYTES = 32;

export interface StackSecretDeps {
  ssm: Pick<SSMClient, 'send'>;
  log: Log;
  /** Sends CloudFormation's answer to the pre-signed response URL (default: `fetch`). */
  respond?: (url: string, body: string) => Promise<unknown>;
}

export type StackSecretHandler = (event: CloudFormationCustomResourceEvent) => Promise<void>;

/**
 * The custom resource that creates the stack's secret: on Create and Update
 * it writes the SSM SecureString (standard tier, AWS-managed `aws/ssm` key)
 * holding {@link STACK_SECRET_BYTES} random bytes, base64-encoded, so the secret
 * never appears in a template, a stack output or a log; an existing one is
 * kept (a stack update does not rotate it, see docs/security.md). On Delete it
 * removes the parameter (one already gone is fine). Whatever happens, it
 * answers CloudFormation through the pre-signed response URL: a failure says
 * `FAILED` (its reason points at the log, which has the error's name only).
 */
export function createStackSecretHandler(deps: StackSecretDeps): StackSecretHandler {
  const respond = deps.respond ?? putResponse;
  return async (event) => {
    const name = String(event.ResourceProperties[PARAMETER_NAME_PROPERTY]);
    let status: 'SUCCESS' | 'FAILED' = 'SUCCESS';
    try {
      await (event.RequestType === 'Delete' ? removeKey(deps.ssm, name) : createKey(deps.ssm, name));
      deps.log({ event: 'stack-secret', requestType: event.RequestType });
    } catch (error) {
      status = 'FAILED';
      deps.log({ event: 'stack-secret-error', requestType: event.RequestType, error: errorName(error) });
    }
    const body = JSON.stringify({
      Status: status,
      Reason: status === 'FAILED' ? 'See the function log' : 'OK',
      PhysicalResourceId: name,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
    });
    await respond(event.ResponseURL, body);
  };
}

async function createKey(ssm: StackSecretDeps['ssm'], name: string): Promise<void> {
  const put = new PutParameterCommand({
    Name: name,
    Type: 'SecureString',
    Tier: 'Standard',
    Value: randomBytes(STACK_SECRET_BYTES).toString('base64'),
    Overwrite: false,
  });
  await ssm.send(put).catch((error: unknown) => {
    if (!(error instanceof ParameterAlreadyExists)) throw error;
  });
}

async function removeKey(ssm: StackSecretDeps['ssm'], name: string): Promise<void> {
  await ssm.send(new DeleteParameterCommand({ Name: name })).catch((error: unknown) => {
    if (!(error instanceof ParameterNotFound)) throw error;
  });
}

/** CloudFormation's response URL wants a PUT with no content type. */
async function putResponse(url: string, body: string): Promise<void> {
  await fetch(url, { method: 'PUT', headers: { 'content-type': '', 'content-length': String(Buffer.byteLength(body)) }, body });
}
