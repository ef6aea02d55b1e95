import type { ToolDefinition } from 'mcp-tasks-serverless';
import { hello } from './hello.ts';

/** The tools this project serves: `npm start` locally, the `McpTasks` construct when deployed. Add yours here. */
export const tools: ToolDefinition[] = [hello];
