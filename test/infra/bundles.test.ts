/**
 * The functions' bundles as the default stack's synthesis leaves them on disk
 * (esbuild runs for real): each starts in a fresh process with the environment
 * the stack sets, and carries the tools and SDKs its function needs, nothing
 * more. Synthesis is shared with the other stack tests (synth.ts).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { productTools } from '../../functions/tools/index.ts';
import { TOOLSET_SOURCES } from '../../infra/app.ts';
import { TRACED_FUNCTIONS } from '../../infra/constructs/function-code.ts';
import { bundlingFor } from '../../infra/constructs/task-function.ts';
import { ENV } from '../../shared/config.ts';
import { SETTING_DOCS } from '../../shared/config-docs.ts';
import { PROTOCOL_VERSION } from '../../shared/wire.ts';
import { httpApiEvent } from '../support/factories.ts';
import { requestMeta } from '../support/wire.ts';
import {
  bundledStack,
  bundleWorker,
  functions,
  type Json,
  only,
  ROOT,
  removeSynthesized,
  resourcesOf,
  type Synthesized,
  workflowFunctions,
} from './synth.ts';

let base: Synthesized;
/** What `TASKS_PUBLIC_URL` (the API's endpoint, a token) stands for here: a URL, as the setting requires. */
const PLACEHOLDER_URL = 'https://placeholder.execute-api.us-east-1.amazonaws.com';
/** What `TASKS_WORKFLOWS` (the machines' ARNs, tokens) stands for here: bindings, as the setting requires. */
const PLACEHOLDER_WORKFLOWS = JSON.stringify({ deploy_release: 'arn:aws:states:us-east-1:123456789012:stateMachine:placeholder' });
/** Placeholders for the settings whose values must parse. */
const PLACEHOLDERS: Record<string, string> = { [ENV.publicUrl]: PLACEHOLDER_URL, [ENV.workflows]: PLACEHOLDER_WORKFLOWS };

before(() => {
  base = bundledStack();
});

after(removeSynthesized);

describe('bundles', () => {
  /** The Node to start bundles with: the repository's Node 22 when installed (closer to Lambda's), else this one. */
  const nodeBinary = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;

  it('start in a fresh process with the environment the stack sets', () => {
    const sizes: string[] = [];
    for (const [id, fn] of resourcesOf(base.json, 'AWS::Lambda::Function')) {
      const key = fn['Properties']['Code']['S3Key'] as string;
      const assetDir = join(base.outdir, `asset.${key.replace(/\.zip$/, '')}`);
      const bundle = join(assetDir, 'index.mjs');
      assert.ok(existsSync(bundle), `${id}: no bundle at ${bundle}`);

      // Tokens (Ref, GetAtt) have no value before deployment: placeholders stand in (a URL where the setting reads one).
      const variables = fn['Properties']['Environment']['Variables'] as Json;
      const environment = Object.fromEntries(
        Object.entries(variables).map(([name, value]) => [
          name,
          typeof value === 'string' ? value : (PLACEHOLDERS[name] ?? `placeholder-${name.toLowerCase()}`),
        ]),
      );
      const child = spawnSync(
        nodeBinary,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(pathToFileURL(bundle).href)}); if (typeof m.handler !== 'function') process.exit(2);`,
        ],
        {
          cwd: assetDir,
          env: { PATH: process.env['PATH'] ?? '', ...environment, AWS_REGION: 'us-east-1' },
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      assert.equal(child.status, 0, `${id} failed to start (exit ${child.status}):\n${child.stderr}`);
      sizes.push(`${id}: ${statSync(bundle).size} bytes (index.mjs), ${statSync(`${bundle}.map`).size} bytes (source map)`);
    }
    const version = spawnSync(nodeBinary, ['--version'], { encoding: 'utf8' }).stdout.trim();
    console.log(`bundle sizes (started with Node ${version}):\n  ${sizes.join('\n  ')}`);
  });
});

describe('the MCP bundle', () => {
  it("serves today's product tools, and only them (the construct's generated entry, bundled)", () => {
    const [, fn] = functions(base.json).mcp;
    const key = fn['Properties']['Code']['S3Key'] as string;
    const bundle = join(base.outdir, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: requestMeta() } });
    const event = httpApiEvent({
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': PROTOCOL_VERSION,
        'mcp-method': 'tools/list',
      },
      body,
    });
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { handler } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
         const response = await handler(JSON.parse(process.env.EVENT));
         process.stdout.write(JSON.stringify(JSON.parse(response.body).result.tools.map((tool) => tool.name)));`,
      ],
      {
        env: {
          PATH: process.env['PATH'] ?? '',
          EVENT: JSON.stringify(event),
          AWS_REGION: 'us-east-1',
          [ENV.tableName]: 'tasks',
          [ENV.queueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/tasks',
          [ENV.stackSecretParameter]: '/McpTasks/request-state-key',
        },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    assert.equal(child.status, 0, child.stderr);
    // The tasks-declaring request is served the catalogue itself (the fallback tools are for clients without tasks).
    assert.deepEqual(
      JSON.parse(child.stdout),
      productTools.map((tool) => tool.name),
    );
  });
});

describe('bundle contents', () => {
  /** npm packages a function's bundle contains, from its source map. */
  const packagesIn = (fn: Json): Set<string> => {
    const key = fn['Properties']['Code']['S3Key'] as string;
    const map = JSON.parse(readFileSync(join(base.outdir, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs.map'), 'utf8')) as {
      sources: string[];
    };
    return new Set(
      map.sources
        .filter((source) => source.includes('node_modules/'))
        .map((source) => {
          const [first, second] = source.slice(source.lastIndexOf('node_modules/') + 'node_modules/'.length).split('/');
          return first!.startsWith('@') ? `${first}/${second}` : first!;
        }),
    );
  };

  /** The folder of a function's bundle. */
  const assetDirOf = (fn: Json): string =>
    join(base.outdir, `asset.${(fn['Properties']['Code']['S3Key'] as string).replace(/\.zip$/, '')}`);

  /** The project's own source files a function's bundle contains, from its source map. */
  const ownSourcesIn = (fn: Json): string[] => {
    const assetDir = assetDirOf(fn);
    const map = JSON.parse(readFileSync(join(assetDir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
    return map.sources.filter((source) => !source.includes('node_modules/')).map((source) => relative(ROOT, resolve(assetDir, source)));
  };

  it('of the default (product) deployment carry the product tools and no conformance or test fixture', () => {
    const fns = functions(base.json);
    for (const name of ['mcp', 'worker'] as const) {
      const sources = ownSourcesIn(fns[name][1]);
      assert.ok(
        sources.some((source) => source.startsWith('functions/tools/')),
        `${name} bundles the product tools: ${sources.join(', ')}`,
      );
      const fixtures = sources.filter((source) => source.startsWith('functions/fixtures/'));
      assert.deepEqual(fixtures, [], `${name} must not bundle fixtures`);
    }
    for (const name of ['deadLetter', 'sweeper', 'console'] as const) {
      assert.deepEqual(
        ownSourcesIn(fns[name][1]).filter((source) => source.startsWith('functions/tools/')),
        [],
        `${name} bundles no tool`,
      );
    }
  });

  it("carry none of the settings' documentation (only the docs read `shared/config-docs.ts`)", () => {
    for (const [id, fn] of resourcesOf(base.json, 'AWS::Lambda::Function')) {
      assert.ok(!ownSourcesIn(fn).includes('shared/config-docs.ts'), `${id} must not bundle shared/config-docs.ts`);
      const text = readFileSync(join(assetDirOf(fn), 'index.mjs'), 'utf8');
      const carried = Object.entries(SETTING_DOCS).filter(([, docs]) => text.includes(docs.meaning));
      assert.deepEqual(
        carried.map(([key]) => key),
        [],
        `${id} carries the meanings of settings`,
      );
    }
  });

  it('of a deployment with the conformance toolset carry its fixtures (its entry imports them)', async () => {
    const metafile = await bundleWorker(bundlingFor().define ?? {}, TOOLSET_SOURCES.all);
    const inputs = Object.keys(metafile.inputs);
    assert.ok(
      inputs.some((path) => path.startsWith('functions/fixtures/')),
      'conformance fixtures bundled for toolset "all"',
    );
    assert.ok(!inputs.some((path) => path.startsWith('functions/fixtures/durability/')), 'the durability fixtures never ship');
  });

  it('of a deployment without workflow tools carry no Step Functions client; with them, only the worker does', async () => {
    const clientsOf = async (tools: (typeof TOOLSET_SOURCES)[keyof typeof TOOLSET_SOURCES]) => {
      const metafile = await bundleWorker(bundlingFor().define ?? {}, tools);
      const [, output] = Object.entries(metafile.outputs)[0]!;
      return Object.entries(output.inputs).filter(([path, { bytesInOutput }]) => bytesInOutput > 0 && path.includes('@aws-sdk/client-sfn'));
    };
    assert.deepEqual(await clientsOf(TOOLSET_SOURCES.conformance), [], 'the conformance toolset has no workflow tool');
    assert.ok((await clientsOf(TOOLSET_SOURCES.product)).length > 0, "the product's deploy_release runs a workflow");
  });

  it('of a deployment with tracing off carry no OpenTelemetry; with it on, the functions whose entries install the adapter do', async () => {
    for (const [id, fn] of resourcesOf(base.json, 'AWS::Lambda::Function')) {
      const otel = [...packagesIn(fn)].filter((name) => name.startsWith('@opentelemetry/'));
      assert.deepEqual(otel, [], `${id} carries OpenTelemetry with tracing off`);
      assert.ok(!ownSourcesIn(fn).some((source) => source.startsWith('shared/tracing/otel/')), `${id} bundles the tracing adapter`);
    }
    for (const fn of ['worker', 'mcp', ...TRACED_FUNCTIONS] as const) {
      const metafile = await bundleWorker(bundlingFor().define ?? {}, TOOLSET_SOURCES.product, { tracing: true, fn });
      const [, output] = Object.entries(metafile.outputs)[0]!;
      const carried = Object.entries(output.inputs).filter(
        ([path, { bytesInOutput }]) => bytesInOutput > 0 && path.includes('@opentelemetry/sdk-trace'),
      );
      assert.ok(carried.length > 0, `the ${fn}'s entry installs the adapter with tracing on`);
    }
  });

  it('carry only the SDKs each function uses (the composition root is imported by path)', () => {
    const fns = { ...functions(base.json), ...workflowFunctions(base.json) };
    const expected: Record<keyof typeof fns, { has: string[]; lacks: string[] }> = {
      // The MCP function verifies tokens (jose); the local authorization server never ships.
      // Every function that ends tasks or asks a person publishes its lifecycle events (EventBridge).
      mcp: {
        has: [
          '@aws-sdk/client-dynamodb',
          '@aws-sdk/client-sqs',
          '@aws-sdk/client-eventbridge',
          '@modelcontextprotocol/server',
          'zod',
          'jose',
        ],
        lacks: ['oidc-provider', 'koa', '@aws-sdk/client-sfn'],
      },
      // The worker reads the state key (SSM) to seal the tokens of the callback URLs it hands out.
      // With workflow tools (the product's deploy_release) it alone makes the Step Functions calls.
      worker: {
        has: [
          '@aws-sdk/client-dynamodb',
          '@aws-sdk/client-sqs',
          '@aws-sdk/client-eventbridge',
          '@aws-sdk/client-ssm',
          '@aws-sdk/client-sfn',
          'zod',
        ],
        lacks: ['@modelcontextprotocol/server', 'jose', 'oidc-provider'],
      },
      // A workflow's end onto its row and the resume; no Step Functions call (the worker makes them), no tool, no events.
      events: {
        has: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs'],
        lacks: ['@aws-sdk/client-sfn', '@aws-sdk/client-ssm', '@aws-sdk/client-eventbridge', 'zod', '@modelcontextprotocol/server'],
      },
      // A question (its task token sealed under the stack's secret: SSM) or a progress message onto the row, and the resume.
      receiver: {
        has: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@aws-sdk/client-ssm'],
        lacks: ['@aws-sdk/client-sfn', '@aws-sdk/client-eventbridge', '@modelcontextprotocol/server'],
      },
      sweeper: {
        has: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@aws-sdk/client-eventbridge'],
        lacks: ['zod', '@modelcontextprotocol/server', 'jose', 'oidc-provider', '@aws-sdk/client-sfn'],
      },
      // It drains the DLQ itself (no event source mapping): the SQS client is its own.
      deadLetter: {
        has: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@aws-sdk/client-eventbridge'],
        lacks: ['zod', '@modelcontextprotocol/server', 'jose', 'oidc-provider'],
      },
      // Completions: the row (DynamoDB), the resume (SQS), the token's key (SSM); no tool, no protocol, no events.
      callbacks: {
        has: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@aws-sdk/client-ssm'],
        lacks: ['zod', '@modelcontextprotocol/server', 'jose', '@aws-sdk/client-eventbridge', 'hono', '@aws-sdk/client-sfn'],
      },
      // Pages (Hono), sign-in (openid-client, jose), answers checked with the MCP SDK's validator; no tool runs here, and the
      // Secrets Manager client only comes with a console client secret.
      console: {
        has: [
          '@aws-sdk/client-dynamodb',
          '@aws-sdk/client-sqs',
          '@aws-sdk/client-eventbridge',
          'hono',
          'openid-client',
          'jose',
          '@modelcontextprotocol/server',
        ],
        lacks: ['oidc-provider', 'koa', 'playwright-core', '@aws-sdk/client-secrets-manager'],
      },
    };
    for (const [name, { has, lacks }] of Object.entries(expected) as Array<[keyof typeof fns, { has: string[]; lacks: string[] }]>) {
      const packages = packagesIn(fns[name][1]);
      for (const pkg of has) assert.ok(packages.has(pkg), `${name} bundles ${pkg}`);
      for (const pkg of lacks) assert.ok(!packages.has(pkg), `${name} must not bundle ${pkg}`);
    }
    // The function that creates the stack's secret publishes nothing: the EventBridge client is imported by path, by the publishers only.
    const [, secretCreator] = only(base.json, 'AWS::Lambda::Function', (fn) =>
      String(fn['Properties']['Description']).includes("the stack's secret"),
    );
    assert.ok(
      !packagesIn(secretCreator).has('@aws-sdk/client-eventbridge'),
      "the function that creates the stack's secret must not bundle the EventBridge client",
    );
  });
});
