/**
 * The worker as deployed, composed once per execution environment: the Lambda
 * entry `McpTasks` generates at synthesis calls it at module scope with the
 * deployment's tools (`infra/constructs/tools-module.ts`), so a bundle holds
 * exactly the tools its deployment serves. See `app.ts` for the handler.
 */
import { loadConfig } from '../../shared/config.ts';
import { purposeKeys } from '../../shared/keys.ts';
import { jsonLog } from '../../shared/log.ts';
import { validateCatalogue } from '../../shared/runtime/catalogue.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { callbackWaits, failing, leases, reading, steps, workflowRuns } from '../../shared/tasks/dynamodb/index.ts';
import { unboundWorkflows, type WorkflowRuntime } from '../../shared/workflows/tool.ts';
import { dynamoDbStore } from '../lib/dynamodb.ts';
import { eventBridgePublisher } from '../lib/eventbridge.ts';
import { sqsQueue } from '../lib/sqs.ts';
import { ssmStackSecret } from '../lib/stack-secret.ts';
import { withDeployedSettings } from '../lib/tool-settings.ts';
import { createWorkerHandler, type WorkerHandler } from './app.ts';

/**
 * The handler running `tools` (a duplicate name or an invalid definition
 * throws here, naming the tool). `workflowRuntime` (`sfnWorkflows`, from
 * `../lib/sfn.ts`) is given by the entry of a deployment with workflow tools
 * only, so any other bundle carries neither the Step Functions client nor
 * the workflow runner.
 */
export function deployedHandler(tools: readonly ToolDefinition[], workflowRuntime?: WorkflowRuntime): WorkerHandler {
  const config = loadConfig();
  const store = dynamoDbStore(config, [leases, failing, reading, steps, callbackWaits, workflowRuns]);
  const log = jsonLog();
  // Callback URLs and workflow task tokens are sealed under keys derived from the stack's secret (read on first use).
  const keys = config.stackSecretParameter ? purposeKeys(ssmStackSecret(config.stackSecretParameter)) : undefined;
  const workflows =
    workflowRuntime && keys ? { engine: workflowRuntime.engine(), bindings: config.workflows, store, keys, log } : undefined;
  const catalogue = withDeployedSettings(validateCatalogue(tools));
  return createWorkerHandler({
    config,
    store,
    queue: sqsQueue(config),
    tools: workflowRuntime ? workflowRuntime.bind(catalogue, workflows) : unboundWorkflows(catalogue),
    log,
    eventPublisher: eventBridgePublisher(config),
    ...(keys ? { keys } : {}),
  });
}
