/** Lambda entry of the custom resource that creates the stack's secret (see `app.ts`); CloudFormation invokes it directly. */
import { SSMClient } from '@aws-sdk/client-ssm';
import { jsonLog } from '../../shared/log.ts';
import { createStackSecretHandler } from './app.ts';

export const handler = createStackSecretHandler({ ssm: new SSMClient({}), log: jsonLog() });
