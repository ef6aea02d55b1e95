import { SFNClient } from '@aws-sdk/client-sfn';
import { SfnWorkflowEngine } from '../../shared/engines/stepfunctions/index.ts';
import { workflowRuns } from '../../shared/tasks/dynamodb/index.ts';
import { bindWorkflows } from '../../shared/workflows/tool.ts';
import { dynamoDbStore } from './dynamodb.ts';
import type { EngineRuntime } from './engine-runtime.ts';

/**
 * The worker's workflow tools on Step Functions: the engine, whose client's
 * endpoint comes from the standard `AWS_ENDPOINT_URL_SFN` variable when set
 * (so the same entry runs against AWS and an emulator), the runner that
 * supplies each workflow tool's handler (`bindWorkflows`), and the store
 * operations it calls (`workflowRuns`). Imported only by the worker's entries
 * of deployments with workflow tools (`infra/constructs/tools-module.ts`):
 * any other bundle carries neither the Step Functions client nor the
 * workflow runner.
 */
export const sfnWorkflows: EngineRuntime = {
  bind: (tools, parts) =>
    bindWorkflows(
      tools,
      parts && {
        engine: new SfnWorkflowEngine({ client: new SFNClient({}) }),
        bindings: parts.config.workflows,
        store: dynamoDbStore(parts.config, [workflowRuns], parts.dynamodb),
        keys: parts.keys,
        log: parts.log,
      },
    ),
};
