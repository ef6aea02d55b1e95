import { App, CfnOutput, Stack } from 'aws-cdk-lib';
import { McpTasks } from 'mcp-tasks-serverless/cdk';

// The deployment: one stack holding the MCP Tasks server, serving the tools of src/tools/index.ts and nothing else.
// Its settings are typed props (auth, cognito, allowedOrigins, workerMaxConcurrency, …): see the package's docs/deploying.md.
const app = new App();
const stack = new Stack(app, '__STACK__');
const tasks = new McpTasks(stack, 'Tasks', { tools: 'src/tools/index.ts' });
new CfnOutput(stack, 'McpUrl', { value: tasks.endpointUrl, description: 'The URL MCP clients call' });
