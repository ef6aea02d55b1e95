/**
 * One tool of each kind the package offers, added by the lane to the project
 * `init` made, as a team would write them: a plain task tool; one that asks a
 * person (an approver other than the caller decides: four eyes); one that
 * waits for an outside system's callback; and a workflow tool with an ASL file
 * of its own (a Parallel, a Map, an SNS task state the local stack runs with
 * the handler of `src/local-states.ts`, and two questions, the second a
 * four-eyes one), bound in the CDK app. `src/tools/index.ts` serves them all
 * with the sample tool; `src/tools/task-tools.ts` all but the workflow.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The tools besides the workflow, by name: what `src/tools/task-tools.ts` exports as `taskTools`. */
export const TASK_TOOLS = ['hello', 'count_words', 'approve_release', 'build_artifact'] as const;
/** The workflow tool's name. */
export const WORKFLOW_TOOL = 'ship_batch';
/** What the local SNS handler answers: the workflow's result carries it. */
export const LOCAL_MESSAGE_ID = 'local-Notify';

const COUNT_WORDS = `import { defineTool } from 'mcp-tasks-serverless';
import * as z from 'zod';

/** A plain task tool: counts in a step, reporting progress. */
export const countWords = defineTool({
  name: 'count_words',
  description: 'Counts the words of a text.',
  inputSchema: z.object({ text: z.string().max(10_000) }),
  execution: 'task',
  handler: async ({ text }, ctx) => {
    await ctx.progress('Counting');
    const count = await ctx.step('count', async () => text.split(/\\s+/).filter(Boolean).length);
    return { content: [{ type: 'text', text: \`\${count} words\` }], structuredContent: { count } };
  },
});
`;

const APPROVE_RELEASE = `import { defineTool } from 'mcp-tasks-serverless';
import * as z from 'zod';

/** Asks a person: an approver other than the caller decides on the task's page (four eyes). */
export const approveRelease = defineTool({
  name: 'approve_release',
  description: 'Releases once an approver other than the caller approves.',
  inputSchema: z.object({ release: z.string().min(1).max(100) }),
  execution: 'task',
  answeredBy: 'person',
  handler: async ({ release }, ctx) => {
    const answer = await ctx.elicit('approval', {
      fourEyes: true,
      message: \`Release \${release}?\`,
      requestedSchema: { type: 'object', properties: { approve: { type: 'boolean', title: 'Approve' } }, required: ['approve'] },
    });
    const approved = answer.action === 'accept' && answer.content?.['approve'] === true;
    const decidedBy = answer.decidedBy?.name ?? answer.decidedBy?.by ?? 'nobody';
    const text = approved ? \`Released \${release}, approved by \${decidedBy}\` : \`Not released: \${release}\`;
    return { content: [{ type: 'text', text }], structuredContent: { approved, decidedBy }, isError: !approved };
  },
});
`;

const BUILD_ARTIFACT = `import { defineTool, RetryableError } from 'mcp-tasks-serverless';
import * as z from 'zod';

/** Waits for a callback: hands a build system the callback's URL and suspends until it posts the artifact. */
export const buildArtifact = defineTool({
  name: 'build_artifact',
  description: 'Has a build system build something, and waits for it to call back.',
  inputSchema: z.object({ target: z.string().min(1).max(100), system: z.url().describe('The build system: POST {id, target, callbackUrl}') }),
  execution: 'task',
  handler: async ({ target, system }, ctx) => {
    const posted = await ctx.callback<{ artifact: string }>('build', {
      timeoutMs: 10 * 60_000,
      submit: async ({ id, url }) => {
        const response = await fetch(system, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id, target, callbackUrl: url }),
        });
        if (!response.ok) throw new RetryableError(\`The build system answered \${response.status}\`);
      },
    });
    return { content: [{ type: 'text', text: \`Built \${posted.artifact}\` }], structuredContent: posted };
  },
});
`;

const SHIP_BATCH = `import { defineWorkflowTool } from 'mcp-tasks-serverless';
import * as z from 'zod';

/** A workflow tool: src/workflows/ship-batch.asl.json, bound in infra/app.ts. */
export const shipBatch = defineWorkflowTool({
  name: 'ship_batch',
  description: 'Packs a batch, announces it, and ships it once planned and signed off.',
  inputSchema: z.object({ batch: z.string().min(1).max(50), items: z.array(z.string().min(1)).min(1).max(20) }),
  workflow: { name: 'ship-batch', definition: 'src/workflows/ship-batch.asl.json' },
});
`;

const TASK_TOOLS_MODULE = `import type { ToolDefinition } from 'mcp-tasks-serverless';
import { approveRelease } from './approve-release.ts';
import { buildArtifact } from './build-artifact.ts';
import { countWords } from './count-words.ts';
import { hello } from './hello.ts';

/** Every tool but the workflow. */
export const taskTools: ToolDefinition[] = [hello, countWords, approveRelease, buildArtifact];
`;

const INDEX = `import type { ToolDefinition } from 'mcp-tasks-serverless';
import { shipBatch } from './ship-batch.ts';
import { taskTools } from './task-tools.ts';

/** The tools this project serves: \`npm start\` locally, the \`McpTasks\` construct when deployed. */
export const tools: ToolDefinition[] = [...taskTools, shipBatch];
`;

/** The local stack's handler for the SNS state (\`src/local-states.ts\`): deployed, Step Functions publishes itself. */
const LOCAL_STATES = `type LocalStateHandler = (input: unknown, context: { stateName: string; resource: string; taskToken?: string }) => Promise<unknown>;

/** Task states the local Step Functions emulator cannot run, by resource ARN: an SNS publish answers a message id. */
export default {
  'arn:aws:states:::sns:publish': async (_input, { stateName }) => ({ MessageId: \`local-\${stateName}\` }),
} satisfies Record<string, LocalStateHandler>;
`;

/** A question state: a task-token invoke of the receiver (docs/tools.md, "People inside the workflow"). */
function question(key: string, message: string, next: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    Type: 'Task',
    Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
    Parameters: {
      // The construct's placeholder for the receiver, substituted where the machine is created.
      FunctionName: ['$', '{ReceiverFunctionArn}'].join(''),
      Payload: {
        'taskId.$': '$$.Execution.Name',
        'execution.$': '$$.Execution.Id',
        state: key,
        key,
        'message.$': `States.Format('${message}', $.batch)`,
        requestedSchema: { type: 'object', properties: { approve: { type: 'boolean', title: 'Approve' } }, required: ['approve'] },
        'token.$': '$$.Task.Token',
        ...extra,
      },
    },
    TimeoutSeconds: 3600,
    ResultPath: `$.${key}`,
    Catch: [{ ErrorEquals: ['mcp-tasks.Rejected', 'mcp-tasks.Declined'], ResultPath: '$.rejection', Next: 'Rejected' }],
    Next: next,
  };
}

const PACK = {
  StartAt: 'Pack',
  States: {
    Pack: {
      Type: 'Map',
      ItemsPath: '$.items',
      ItemSelector: { 'item.$': '$$.Map.Item.Value' },
      ItemProcessor: {
        ProcessorConfig: { Mode: 'INLINE' },
        StartAt: 'Packed',
        States: { Packed: { Type: 'Pass', Parameters: { 'item.$': '$.item', packed: true }, End: true } },
      },
      End: true,
    },
  },
};

const NOTIFY = {
  StartAt: 'Notify',
  States: {
    Notify: {
      Type: 'Task',
      Resource: 'arn:aws:states:::sns:publish',
      Parameters: { TopicArn: 'arn:aws:sns:us-east-1:123456789012:shipments', 'Message.$': "States.Format('Shipping batch {}', $.batch)" },
      End: true,
    },
  },
};

const SHIP_BATCH_ASL = {
  Comment: 'ship_batch: packs the items and announces the batch in parallel, asks for a plan, then a sign-off, then ships.',
  StartAt: 'Prepare',
  States: {
    Prepare: {
      Type: 'Parallel',
      Branches: [PACK, NOTIFY],
      ResultSelector: { 'packed.$': '$[0]', 'messageId.$': '$[1].MessageId' },
      ResultPath: '$.prepared',
      Next: 'Plan',
    },
    Plan: question('plan', 'Plan shipping batch {}?', 'SignOff', {}),
    SignOff: question('signoff', 'Sign off shipping batch {}?', 'Shipped', { answeredBy: 'person', fourEyes: true }),
    Shipped: {
      Type: 'Pass',
      Parameters: { 'batch.$': '$.batch', 'packed.$': '$.prepared.packed', 'messageId.$': '$.prepared.messageId', shipped: true },
      End: true,
    },
    Rejected: { Type: 'Fail', Error: 'Rejected', CausePath: '$.rejection.Cause' },
  },
};

const APP = (stack: string) => `import { App, CfnOutput, Stack } from 'aws-cdk-lib';
import { McpTasks } from 'mcp-tasks-serverless/cdk';

const app = new App();
const stack = new Stack(app, '${stack}');
// ship_batch's machine is created from the file the tool names.
const tasks = new McpTasks(stack, 'Tasks', { tools: 'src/tools/index.ts', workflows: { ship_batch: {} } });
new CfnOutput(stack, 'McpUrl', { value: tasks.endpointUrl, description: 'The URL MCP clients call' });
`;

/** Writes the tools, the workflow's definition, the local handlers and the CDK app binding the workflow into `project`. */
export function addToolKinds(project: string, stackName: string): void {
  const files: Record<string, string> = {
    'src/tools/count-words.ts': COUNT_WORDS,
    'src/tools/approve-release.ts': APPROVE_RELEASE,
    'src/tools/build-artifact.ts': BUILD_ARTIFACT,
    'src/tools/ship-batch.ts': SHIP_BATCH,
    'src/tools/task-tools.ts': TASK_TOOLS_MODULE,
    'src/tools/index.ts': INDEX,
    'src/local-states.ts': LOCAL_STATES,
    'src/workflows/ship-batch.asl.json': `${JSON.stringify(SHIP_BATCH_ASL, null, 2)}\n`,
    'infra/app.ts': APP(stackName),
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), text);
  }
}
