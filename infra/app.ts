import { fileURLToPath, pathToFileURL } from 'node:url';
import { App, type AppProps, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { ToolsSource } from './constructs/tools-module.ts';
import { type ContextProps, tasksStackPropsFromContext } from './context-props.ts';
import { McpTasks, type McpTasksProps } from './mcp-tasks.ts';

/** The stack's construct id, and so its CloudFormation name. */
export const STACK_ID = 'McpTasks';

/** This repository's root: its tools modules, lock file and `node_modules`. */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PRODUCT: ToolsSource = { module: `${ROOT}functions/tools/index.ts`, export: 'productTools' };
const CONFORMANCE: ToolsSource = { module: `${ROOT}functions/fixtures/conformance.ts`, export: 'conformanceTools' };

/**
 * The tools each toolset serves, by module and export: the product's demo
 * tools, the conformance suite's fixtures, or both. The construct bundles
 * these modules and nothing else (a product deployment ships no fixture).
 */
export const TOOLSET_SOURCES: Record<ContextProps['toolset'], readonly ToolsSource[]> = {
  product: [PRODUCT],
  conformance: [CONFORMANCE],
  all: [PRODUCT, CONFORMANCE],
};

/**
 * The state machines of the toolsets' workflow tools: the product's
 * `deploy_release`, created from its ASL file (the tool names it).
 */
const TOOLSET_WORKFLOWS: Record<ContextProps['toolset'], McpTasksProps['workflows']> = {
  product: { deploy_release: {} },
  conformance: undefined,
  all: { deploy_release: {} },
};

/**
 * The CDK app: this repository's deployment, a stack holding the `McpTasks`
 * construct configured from context, checked by cdk-nag's AwsSolutions pack
 * on every synthesis. Any unacknowledged finding fails synthesis;
 * acknowledgements sit next to the constructs they concern. The construct's id
 * is `Default`, which CDK leaves out of logical ids: the resources keep the
 * ids they had before the construct existed (`test/infra/logical-ids.json`).
 */
export function createApp(props?: AppProps): { app: App; stack: Stack; tasks: McpTasks } {
  const app = new App(props);
  const { toolset, ...settings } = tasksStackPropsFromContext(app.node);
  const stack = new Stack(app, STACK_ID, { description: 'MCP server with the Tasks extension (API Gateway, Lambda, DynamoDB, SQS)' });
  const workflows = TOOLSET_WORKFLOWS[toolset];
  const tasks = new McpTasks(stack, 'Default', {
    ...settings,
    tools: TOOLSET_SOURCES[toolset],
    ...(workflows ? { workflows } : {}),
    projectRoot: ROOT,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack, tasks };
}

// Run by the CDK CLI (`cdk.json`: `npx tsx infra/app.ts`); importing the module only defines `createApp`.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  createApp();
}
