/** Lambda entry of the stack's `requestState` key custom resource (see `app.ts`); CloudFormation invokes it directly. */
import { SSMClient } from '@aws-sdk/client-ssm';
import { jsonLog } from '../../shared/log.ts';
import { createStateKeyHandler } from './app.ts';

export const handler = createStateKeyHandler({ ssm: new SSMClient({}), log: jsonLog() });
