import { pathToFileURL } from 'node:url';
import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { tasksStackPropsFromContext } from './context.ts';
import { TasksStack } from './stack.ts';

/** The stack's construct id, and so its CloudFormation name. */
export const STACK_ID = 'McpTasks';

/**
 * The CDK app: the tasks stack configured from context, checked by cdk-nag's
 * AwsSolutions pack on every synthesis. Any unacknowledged finding fails
 * synthesis; acknowledgements sit next to the constructs they concern.
 */
export function createApp(props?: AppProps): { app: App; stack: TasksStack } {
  const app = new App(props);
  const stack = new TasksStack(app, STACK_ID, {
    ...tasksStackPropsFromContext(app.node),
    description: 'MCP server with the Tasks extension (API Gateway, Lambda, DynamoDB, SQS)',
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}

// Run by the CDK CLI (`cdk.json`: `npx tsx infra/app.ts`); importing the module only defines `createApp`.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  createApp();
}
