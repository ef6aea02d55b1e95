import { SFNClient } from '@aws-sdk/client-sfn';
import { SfnWorkflowEngine } from '../../shared/workflows/sfn-engine.ts';
import { bindWorkflows, type WorkflowRuntime } from '../../shared/workflows/tool.ts';

/**
 * The worker's workflow tools on Step Functions: the engine, whose client's
 * endpoint comes from the standard `AWS_ENDPOINT_URL_SFN` variable when set
 * (so the same entry runs against AWS and an emulator), and the runner that
 * supplies each workflow tool's handler (`bindWorkflows`). Imported only by
 * the worker's entries of deployments with workflow tools
 * (`infra/constructs/tools-module.ts`): any other bundle carries neither the
 * Step Functions client nor the workflow runner.
 */
export const sfnWorkflows: WorkflowRuntime = {
  engine: () => new SfnWorkflowEngine({ client: new SFNClient({}) }),
  bind: bindWorkflows,
};
