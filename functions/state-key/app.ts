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
export const STATE_KEY_BYTES = 32;

export interface StateKeyDeps {
  ssm: Pick<SSMClient, 'send'>;
  log: Log;
  /** Sends CloudFormation's answer to the pre-signed response URL (default: `fetch`). */
  respond?: (url: string, body: string) => Promise<unknown>;
}

export type StateKeyHandler = (event: CloudFormationCustomResourceEvent) => Promise<void>;

/**
 * The stack's `requestState` key custom resource: on Create and Update it
 * writes the SSM SecureString (standard tier, AWS-managed `aws/ssm` key)
 * holding {@link STATE_KEY_BYTES} random bytes, base64-encoded, so the key
 * never appears in a template, a stack output or a log; an existing key is
 * kept (a stack update does not rotate it, see docs/security.md). On Delete it
 * removes the parameter (one already gone is fine). Whatever happens, it
 * answers CloudFormation through the pre-signed response URL: a failure says
 * `FAILED` (its reason points at the log, which has the error's name only).
 */
export function createStateKeyHandler(deps: StateKeyDeps): StateKeyHandler {
  const respond = deps.respond ?? putResponse;
  return async (event) => {
    const name = String(event.ResourceProperties[PARAMETER_NAME_PROPERTY]);
    let status: 'SUCCESS' | 'FAILED' = 'SUCCESS';
    try {
      await (event.RequestType === 'Delete' ? removeKey(deps.ssm, name) : createKey(deps.ssm, name));
      deps.log({ event: 'state-key', requestType: event.RequestType });
    } catch (error) {
      status = 'FAILED';
      deps.log({ event: 'state-key-error', requestType: event.RequestType, error: errorName(error) });
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

async function createKey(ssm: StateKeyDeps['ssm'], name: string): Promise<void> {
  const put = new PutParameterCommand({
    Name: name,
    Type: 'SecureString',
    Tier: 'Standard',
    Value: randomBytes(STATE_KEY_BYTES).toString('base64'),
    Overwrite: false,
  });
  await ssm.send(put).catch((error: unknown) => {
    if (!(error instanceof ParameterAlreadyExists)) throw error;
  });
}

async function removeKey(ssm: StateKeyDeps['ssm'], name: string): Promise<void> {
  await ssm.send(new DeleteParameterCommand({ Name: name })).catch((error: unknown) => {
    if (!(error instanceof ParameterNotFound)) throw error;
  });
}

/** CloudFormation's response URL wants a PUT with no content type. */
async function putResponse(url: string, body: string): Promise<void> {
  await fetch(url, { method: 'PUT', headers: { 'content-type': '', 'content-length': String(Buffer.byteLength(body)) }, body });
}
