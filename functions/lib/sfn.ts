import { SFNClient } from '@aws-sdk/client-sfn';
import { SfnWorkflowEngine } from '../../shared/workflows/sfn-engine.ts';

/**
 * The workflow engine on Step Functions. Without a client, one is created
 * whose endpoint comes from the standard `AWS_ENDPOINT_URL_SFN` variable when
 * set, so the same entry runs against AWS and an emulator. Imported only by
 * the entries that run workflow tools, behind the `TASKS_RUNS_WORKFLOWS`
 * build constant (`WORKFLOWS_CONSTANT`): a bundle that serves no workflow
 * tool carries no Step Functions client.
 */
export function sfnEngine(client: SFNClient = new SFNClient({})): SfnWorkflowEngine {
  return new SfnWorkflowEngine({ client });
}
