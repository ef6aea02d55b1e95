/**
 * The "bare" bundles the function bundles are measured against: per function,
 * an entry importing only the packages its job needs, touching one
 * representative export of each so that it is not tree-shaken away. Shared by
 * `npm run bench` (this repository's bundles) and the package lane (a
 * project's, built with the package).
 */
import type { FUNCTION_MODULES } from '../../infra/constructs/function-code.ts';

/**
 * The third-party packages each function's job needs: what its bare bundle
 * imports. The MCP function serves the protocol (MCP SDK, zod for tool input
 * schemas), creates tasks (DynamoDB) and their start messages (SQS), reads
 * its requestState sealing key once (SSM), verifies access tokens when it
 * is a resource server (jose) and publishes the events of the cancels it
 * makes (EventBridge); the worker runs tools (zod) against the table, hands
 * tasks over through the queue and publishes questions and ends; the sweeper
 * queries the table, enqueues and publishes the waits it ends; the
 * dead-letter handler drains its queue, writes the table and publishes the
 * ends it makes; the callbacks function records completions.
 */
export const USES: Record<keyof typeof FUNCTION_MODULES, string[]> = {
  mcp: [
    '@aws-sdk/client-dynamodb',
    '@aws-sdk/client-sqs',
    '@aws-sdk/client-ssm',
    '@aws-sdk/client-eventbridge',
    '@modelcontextprotocol/server',
    'zod',
    'jose',
  ],
  // The worker also reads the state key (SSM) to seal the tokens of the callback URLs it hands out; with workflow tools it
  // also runs Step Functions ({@link WORKFLOW_PACKAGE}).
  worker: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@aws-sdk/client-eventbridge', '@aws-sdk/client-ssm', 'zod'],
  // The callbacks function unseals tokens (SSM for the state key), writes the row and enqueues the resume.
  callbacks: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@aws-sdk/client-ssm'],
  deadLetter: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@aws-sdk/client-eventbridge'],
  sweeper: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@aws-sdk/client-eventbridge'],
  stackSecret: ['@aws-sdk/client-ssm'],
  // The workflow-events consumer records an execution's end on its row and enqueues the resume; the receiver records a
  // question (sealing its task token under the state key: SSM) or a progress message, and enqueues the resume.
  workflowEvents: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs'],
  workflowReceiver: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@aws-sdk/client-ssm'],
  // The console reads and answers tasks (DynamoDB, SQS for the resume), derives its cookie keys from the state key
  // (SSM), checks answers with the MCP SDK's JSON Schema validator, serves pages (Hono) and signs people in
  // (openid-client, jose).
  console: [
    '@aws-sdk/client-dynamodb',
    '@aws-sdk/client-sqs',
    '@aws-sdk/client-eventbridge',
    '@aws-sdk/client-ssm',
    '@modelcontextprotocol/server',
    'hono',
    'hono/aws-lambda',
    'hono/body-limit',
    'hono/cookie',
    'hono/html',
    'hono/jsx-renderer',
    'hono/jsx/jsx-runtime',
    'hono/secure-headers',
    'jose',
    'openid-client',
  ],
};

/** What the worker of a deployment with workflow tools uses besides {@link USES}' (its bare bundle has it too). */
export const WORKFLOW_PACKAGE = '@aws-sdk/client-sfn';

/**
 * The one export of each package a bare entry touches: what a minimal Lambda
 * function using that package would reference (and, for the AWS SDK, create
 * at module scope, as the functions do).
 */
const TOUCH: Record<string, { imports: string; uses: string }> = {
  '@aws-sdk/client-dynamodb': {
    imports: "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
    uses: 'new DynamoDBClient({})',
  },
  '@aws-sdk/client-sqs': { imports: "import { SQSClient } from '@aws-sdk/client-sqs';", uses: 'new SQSClient({})' },
  '@aws-sdk/client-sfn': { imports: "import { SFNClient } from '@aws-sdk/client-sfn';", uses: 'new SFNClient({})' },
  '@aws-sdk/client-ssm': { imports: "import { SSMClient } from '@aws-sdk/client-ssm';", uses: 'new SSMClient({})' },
  '@aws-sdk/client-eventbridge': {
    imports: "import { EventBridgeClient } from '@aws-sdk/client-eventbridge';",
    uses: 'new EventBridgeClient({})',
  },
  '@modelcontextprotocol/server': {
    imports: "import { createMcpHandler } from '@modelcontextprotocol/server';",
    uses: 'createMcpHandler',
  },
  zod: { imports: "import * as z from 'zod';", uses: 'z.object({ value: z.string() })' },
  jose: { imports: "import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';", uses: '[createRemoteJWKSet, decodeJwt, jwtVerify]' },
  hono: { imports: "import { Hono } from 'hono';", uses: 'new Hono()' },
  'hono/aws-lambda': { imports: "import { handle } from 'hono/aws-lambda';", uses: 'handle' },
  'hono/body-limit': { imports: "import { bodyLimit } from 'hono/body-limit';", uses: 'bodyLimit' },
  'hono/cookie': { imports: "import { getCookie, setCookie } from 'hono/cookie';", uses: '[getCookie, setCookie]' },
  'hono/html': { imports: "import { raw } from 'hono/html';", uses: 'raw' },
  'hono/jsx-renderer': { imports: "import { jsxRenderer } from 'hono/jsx-renderer';", uses: 'jsxRenderer' },
  'hono/jsx/jsx-runtime': { imports: "import { jsx } from 'hono/jsx/jsx-runtime';", uses: 'jsx' },
  'hono/secure-headers': { imports: "import { secureHeaders } from 'hono/secure-headers';", uses: 'secureHeaders' },
  'openid-client': {
    imports: "import { authorizationCodeGrant, buildAuthorizationUrl, discovery } from 'openid-client';",
    uses: '[authorizationCodeGrant, buildAuthorizationUrl, discovery]',
  },
};

/** Where a function uses another export of a package than {@link TOUCH}'s: the console uses the MCP SDK for its answer validator only. */
const TOUCH_FOR: Partial<Record<keyof typeof FUNCTION_MODULES, Record<string, { imports: string; uses: string }>>> = {
  console: {
    '@modelcontextprotocol/server': { imports: "import { fromJsonSchema } from '@modelcontextprotocol/server';", uses: 'fromJsonSchema' },
  },
};

/** The entry of a bare bundle: `packages` imported, one export of each touched, and a `handler`. */
export function bareEntry(name: keyof typeof FUNCTION_MODULES, packages: string[]): string {
  const lines = packages.map((specifier, i) => {
    const touch = TOUCH_FOR[name]?.[specifier] ??
      TOUCH[specifier] ?? { imports: `import * as package${i} from '${specifier}';`, uses: `package${i}` };
    return `${touch.imports}\nexport const touched${i} = ${touch.uses};`;
  });
  return `${lines.join('\n')}\nexport async function handler() { return ${packages.length}; }\n`;
}
