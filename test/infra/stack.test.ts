/**
 * The CDK stack, synthesized the way `cdk synth` does it (`createApp`, the
 * context of `cdk.json`, cdk-nag registered on the app), asserting the
 * properties behaviour depends on. Bundling runs esbuild for real, so the
 * default stack is synthesized once and shared; the JWT variant skips bundling.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Validations, type App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { createApp } from '../../infra/app.ts';
import { OPEN_ENDPOINT_WARNING } from '../../infra/constructs/api.ts';
import { LAMBDA_RUNTIME } from '../../infra/constructs/task-function.ts';
import { MAX_RECEIVE_COUNT, VISIBILITY_TIMEOUT_FACTOR } from '../../infra/constructs/task-queue.ts';
import { DEFAULT_SETTINGS, ENV } from '../../shared/config.ts';
import { ACTIVE_INDEX, TABLE_KEYS, TTL_ATTRIBUTE } from '../../shared/tasks/dynamodb-schema.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CDK_CONTEXT = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

type Json = Record<string, any>;

interface Synthesized {
  app: App;
  outdir: string;
  template: Template;
  json: Json;
  /** `validation-report.json` of the cloud assembly: cdk-nag findings and annotations. */
  report: { pluginReports: Array<{ pluginName: string; violations: Array<{ ruleName: string; severity: string; violatingConstructs: Array<{ constructPath: string }> }> }> };
}

const outdirs: string[] = [];

function synth(context: Record<string, unknown> = {}): Synthesized {
  const outdir = mkdtempSync(join(tmpdir(), 'mcp-tasks-cdk-'));
  outdirs.push(outdir);
  const { app, stack } = createApp({ outdir, context: { ...CDK_CONTEXT, ...context } });
  // Synthesizing the app (not `Template.fromStack`, which would synthesize
  // again) runs the validation plugins once and keeps the assets on disk.
  const assembly = app.synth();
  const json = assembly.getStackByName(stack.stackName).template as Json;
  const reportPath = join(outdir, 'validation-report.json');
  const report = existsSync(reportPath) ? JSON.parse(readFileSync(reportPath, 'utf8')) : { pluginReports: [] };
  return { app, outdir, template: Template.fromJSON(json), json, report };
}

function resourcesOf(json: Json, type: string): Array<[string, Json]> {
  return Object.entries(json['Resources'] as Record<string, Json>).filter(([, resource]) => resource['Type'] === type);
}

function only(json: Json, type: string, predicate: (resource: Json) => boolean = () => true): [string, Json] {
  const matches = resourcesOf(json, type).filter(([, resource]) => predicate(resource));
  assert.equal(matches.length, 1, `expected exactly one ${type}, found ${matches.length}`);
  return matches[0]!;
}

const refTo = (logicalId: string) => ({ Ref: logicalId });
const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

/** The functions by entry, told apart by their description. */
function functions(json: Json) {
  const byDescription = (text: string) => only(json, 'AWS::Lambda::Function', (fn) => String(fn['Properties']['Description']).includes(text));
  return { mcp: byDescription('MCP endpoint'), worker: byDescription('runs queued tasks'), deadLetter: byDescription('dead-lettered') };
}

function queues(json: Json) {
  const queue = only(json, 'AWS::SQS::Queue', (q) => q['Properties']['RedrivePolicy'] !== undefined);
  const deadLetter = only(json, 'AWS::SQS::Queue', (q) => q['Properties']['RedrivePolicy'] === undefined);
  return { queue, deadLetter };
}

function roleLogicalIdOf(fn: Json): string {
  return fn['Properties']['Role']['Fn::GetAtt'][0] as string;
}

/** Statements of the policies attached to a role. */
function statementsOf(json: Json, roleLogicalId: string): Json[] {
  return resourcesOf(json, 'AWS::IAM::Policy')
    .filter(([, policy]) => (policy['Properties']['Roles'] as Json[]).some((role) => role['Ref'] === roleLogicalId))
    .flatMap(([, policy]) => policy['Properties']['PolicyDocument']['Statement'] as Json[]);
}

const asList = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

let base: Synthesized;
let jwt: Synthesized;

before(() => {
  base = synth();
  jwt = synth({
    jwtIssuer: 'https://issuer.example.com/',
    jwtAudience: 'mcp-tasks, other-client',
    toolset: 'conformance',
    removalPolicy: 'destroy',
    // The functions are the same as in the default stack: skip esbuild.
    'aws:cdk:bundling-stacks': [],
  });
});

after(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

describe('task table', () => {
  it('uses the key schema, TTL attribute and sparse index the code uses', () => {
    const [, table] = only(base.json, 'AWS::DynamoDB::Table');
    const props = table['Properties'];
    assert.deepEqual(props['KeySchema'], [
      { AttributeName: TABLE_KEYS.partition, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sort, KeyType: 'RANGE' },
    ]);
    assert.deepEqual(props['TimeToLiveSpecification'], { AttributeName: TTL_ATTRIBUTE, Enabled: true });
    assert.deepEqual(props['GlobalSecondaryIndexes'], [
      {
        IndexName: ACTIVE_INDEX.name,
        KeySchema: [
          { AttributeName: ACTIVE_INDEX.partition, KeyType: 'HASH' },
          { AttributeName: ACTIVE_INDEX.sort, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    const types = Object.fromEntries((props['AttributeDefinitions'] as Json[]).map((d) => [d['AttributeName'], d['AttributeType']]));
    assert.deepEqual(types, { [TABLE_KEYS.partition]: 'S', [TABLE_KEYS.sort]: 'S', [ACTIVE_INDEX.partition]: 'S', [ACTIVE_INDEX.sort]: 'N' });
  });

  it('is on demand, recoverable and encrypted with the AWS managed KMS key', () => {
    base.template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      // SSEEnabled without a key id is KMS with the AWS managed key (aws/dynamodb).
      SSESpecification: { SSEEnabled: true, KMSMasterKeyId: Match.absent() },
    });
  });

  it('is retained and deletion-protected by default, destroyable when configured', () => {
    const [, kept] = only(base.json, 'AWS::DynamoDB::Table');
    assert.equal(kept['DeletionPolicy'], 'Retain');
    assert.equal(kept['Properties']['DeletionProtectionEnabled'], true);
    const [, destroyed] = only(jwt.json, 'AWS::DynamoDB::Table');
    assert.equal(destroyed['DeletionPolicy'], 'Delete');
    assert.equal(destroyed['Properties']['DeletionProtectionEnabled'], false);
  });
});

describe('task queue and worker', () => {
  it('redrives to an encrypted dead-letter queue after MAX_RECEIVE_COUNT deliveries', () => {
    const { queue: [, queue], deadLetter: [deadLetterId, deadLetter] } = queues(base.json);
    assert.deepEqual(queue['Properties']['RedrivePolicy'], { deadLetterTargetArn: arnOf(deadLetterId), maxReceiveCount: MAX_RECEIVE_COUNT });
    assert.equal(MAX_RECEIVE_COUNT, 5);
    for (const q of [queue, deadLetter]) assert.equal(q['Properties']['SqsManagedSseEnabled'], true);
  });

  it('denies requests without TLS on both queues', () => {
    const { queue: [queueId], deadLetter: [deadLetterId] } = queues(base.json);
    for (const id of [queueId, deadLetterId]) {
      const [, policy] = only(base.json, 'AWS::SQS::QueuePolicy', (p) => (p['Properties']['Queues'] as Json[]).some((q) => q['Ref'] === id));
      const statements = policy['Properties']['PolicyDocument']['Statement'] as Json[];
      assert.ok(
        statements.some((s) => s['Effect'] === 'Deny' && s['Condition']?.['Bool']?.['aws:SecureTransport'] === 'false'),
        `queue ${id} must deny insecure transport`,
      );
    }
  });

  it('feeds the worker with partial batch responses and a maximum concurrency', () => {
    const { worker: [workerId] } = functions(base.json);
    const { queue: [queueId] } = queues(base.json);
    const [, mapping] = only(base.json, 'AWS::Lambda::EventSourceMapping', (m) => m['Properties']['FunctionName']['Ref'] === workerId);
    assert.deepEqual(mapping['Properties']['EventSourceArn'], arnOf(queueId));
    assert.deepEqual(mapping['Properties']['FunctionResponseTypes'], ['ReportBatchItemFailures']);
    assert.equal(mapping['Properties']['ScalingConfig']['MaximumConcurrency'], CDK_CONTEXT['workerMaxConcurrency']);
    assert.ok(mapping['Properties']['BatchSize'] >= 1);
  });

  it('feeds the dead-letter handler from the DLQ, also with partial batch responses', () => {
    const { deadLetter: [handlerId] } = functions(base.json);
    const { deadLetter: [deadLetterId] } = queues(base.json);
    const [, mapping] = only(base.json, 'AWS::Lambda::EventSourceMapping', (m) => m['Properties']['FunctionName']['Ref'] === handlerId);
    assert.deepEqual(mapping['Properties']['EventSourceArn'], arnOf(deadLetterId));
    assert.deepEqual(mapping['Properties']['FunctionResponseTypes'], ['ReportBatchItemFailures']);
  });

  it('gives each queue a visibility timeout of at least six times its consumer timeout', () => {
    const fns = functions(base.json);
    const { queue: [, queue], deadLetter: [, deadLetter] } = queues(base.json);
    const pairs: Array<[Json, Json]> = [
      [queue, fns.worker[1]],
      [deadLetter, fns.deadLetter[1]],
    ];
    for (const [q, fn] of pairs) {
      const visibility = q['Properties']['VisibilityTimeout'] as number;
      const timeout = fn['Properties']['Timeout'] as number;
      assert.ok(visibility >= VISIBILITY_TIMEOUT_FACTOR * timeout, `visibility ${visibility}s < ${VISIBILITY_TIMEOUT_FACTOR} × timeout ${timeout}s`);
    }
  });

  it('keeps the worker timeout below the task lease and the visibility timeout above it', () => {
    const [, worker] = functions(base.json).worker;
    const { queue: [, queue] } = queues(base.json);
    const leaseMs = Number(worker['Properties']['Environment']['Variables'][ENV.leaseMs]);
    assert.equal(leaseMs, DEFAULT_SETTINGS.leaseMs);
    assert.ok(worker['Properties']['Timeout'] * 1000 < leaseMs, 'a lease must outlive the invocation that took it');
    assert.ok(queue['Properties']['VisibilityTimeout'] * 1000 > leaseMs, 'a redelivery must find the lease of a crashed invocation expired');
  });
});

describe('functions', () => {
  it('run on the one runtime constant, ARM64, with active tracing and their own log group', () => {
    const fns = resourcesOf(base.json, 'AWS::Lambda::Function');
    assert.equal(fns.length, 3);
    for (const [id, fn] of fns) {
      const props = fn['Properties'];
      assert.equal(props['Runtime'], LAMBDA_RUNTIME.name, id);
      assert.deepEqual(props['Architectures'], ['arm64'], id);
      assert.deepEqual(props['TracingConfig'], { Mode: 'Active' }, id);
      assert.equal(props['Handler'], 'index.handler', id);
      const logGroupId = props['LoggingConfig']['LogGroup']['Ref'] as string;
      const logGroup = base.json['Resources'][logGroupId];
      assert.equal(logGroup['Type'], 'AWS::Logs::LogGroup', id);
      assert.equal(logGroup['Properties']['RetentionInDays'], CDK_CONTEXT['logRetentionDays'], id);
    }
  });

  it('get environment variables named by ENV, pointing at this stack\'s table and queue', () => {
    const allowed = new Set<string>([...Object.values(ENV), 'NODE_OPTIONS']);
    const [tableId] = only(base.json, 'AWS::DynamoDB::Table');
    const { queue: [queueId] } = queues(base.json);
    for (const [id, fn] of Object.values(functions(base.json))) {
      const variables = fn['Properties']['Environment']['Variables'] as Json;
      for (const name of Object.keys(variables)) assert.ok(allowed.has(name), `${id}: ${name} is not an ENV constant`);
      assert.deepEqual(variables[ENV.tableName], refTo(tableId), id);
      assert.deepEqual(variables[ENV.queueUrl], refTo(queueId), id);
      assert.equal(variables[ENV.toolset], 'product', id);
    }
    for (const [, fn] of Object.values(functions(jwt.json))) assert.equal(fn['Properties']['Environment']['Variables'][ENV.toolset], 'conformance');
  });

  it('fit the MCP function between the synchronous budget and the HTTP API limit', () => {
    const [, mcp] = functions(base.json).mcp;
    const timeoutMs = (mcp['Properties']['Timeout'] as number) * 1000;
    assert.ok(timeoutMs > DEFAULT_SETTINGS.syncBudgetMs && timeoutMs < 30_000, `${timeoutMs} ms`);
  });
});

describe('IAM', () => {
  it('scopes every statement to this stack\'s resources; only X-Ray gets "*"', () => {
    const policies = resourcesOf(base.json, 'AWS::IAM::Policy');
    assert.ok(policies.length >= 3);
    for (const [id, policy] of policies) {
      for (const statement of policy['Properties']['PolicyDocument']['Statement'] as Json[]) {
        const actions = asList<string>(statement['Action']);
        assert.ok(!actions.some((action) => action.includes('*')), `${id}: wildcard action in ${JSON.stringify(actions)}`);
        const resources = asList<unknown>(statement['Resource']);
        if (resources.includes('*')) {
          assert.deepEqual([...actions].sort(), ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], `${id}: "*" resource for ${actions}`);
        }
        // Anything else references a resource of this stack (Ref/GetAtt), never a hand-written ARN.
        for (const resource of resources) assert.ok(resource === '*' || typeof resource !== 'string', `${id}: literal resource ${String(resource)}`);
      }
    }
  });

  it('uses no managed policies', () => {
    for (const [id, role] of resourcesOf(base.json, 'AWS::IAM::Role')) assert.equal(role['Properties']['ManagedPolicyArns'], undefined, id);
  });

  it('grants table access on the table and its indexes only, to the three functions', () => {
    const [tableId] = only(base.json, 'AWS::DynamoDB::Table');
    for (const [id, fn] of Object.values(functions(base.json))) {
      const dynamo = statementsOf(base.json, roleLogicalIdOf(fn)).filter((s) => asList<string>(s['Action']).some((a) => a.startsWith('dynamodb:')));
      assert.equal(dynamo.length, 1, id);
      assert.deepEqual(dynamo[0]!['Resource'], [arnOf(tableId), { 'Fn::Join': ['', [arnOf(tableId), '/index/*']] }], id);
      assert.ok(asList<string>(dynamo[0]!['Action']).includes('dynamodb:UpdateItem'), id);
    }
  });

  it('lets the MCP function and the worker send to the task queue, and each consumer receive from its own queue only', () => {
    const fns = functions(base.json);
    const { queue: [queueId], deadLetter: [deadLetterId] } = queues(base.json);
    const sqs = (fn: Json) => statementsOf(base.json, roleLogicalIdOf(fn)).filter((s) => asList<string>(s['Action']).some((a) => a.startsWith('sqs:')));
    const actions = (statements: Json[]) => statements.flatMap((s) => asList<string>(s['Action']));

    // Every SQS statement names one of this stack's queues.
    for (const [, fn] of Object.values(fns)) {
      for (const statement of sqs(fn)) assert.ok([queueId, deadLetterId].some((id) => JSON.stringify(statement['Resource']) === JSON.stringify(arnOf(id))));
    }

    const mcp = sqs(fns.mcp[1]);
    assert.deepEqual(mcp.map((s) => s['Resource']), [arnOf(queueId)]);
    assert.ok(actions(mcp).includes('sqs:SendMessage'));
    assert.ok(!actions(mcp).includes('sqs:ReceiveMessage'));

    // The worker consumes the task queue and hands tasks over to it.
    const worker = sqs(fns.worker[1]);
    assert.ok(worker.every((s) => JSON.stringify(s['Resource']) === JSON.stringify(arnOf(queueId))));
    assert.ok(actions(worker).includes('sqs:ReceiveMessage') && actions(worker).includes('sqs:SendMessage'));

    // The dead-letter handler only consumes the DLQ.
    const deadLetter = sqs(fns.deadLetter[1]);
    assert.deepEqual(deadLetter.map((s) => s['Resource']), [arnOf(deadLetterId)]);
    assert.ok(actions(deadLetter).includes('sqs:ReceiveMessage'));
    assert.ok(!actions(deadLetter).includes('sqs:SendMessage'));
  });
});

describe('api', () => {
  it('routes POST /mcp to the MCP function on a throttled, access-logged $default stage', () => {
    const [, route] = only(base.json, 'AWS::ApiGatewayV2::Route');
    assert.equal(route['Properties']['RouteKey'], 'POST /mcp');
    const [, integration] = only(base.json, 'AWS::ApiGatewayV2::Integration');
    assert.equal(integration['Properties']['IntegrationType'], 'AWS_PROXY');
    assert.deepEqual(integration['Properties']['IntegrationUri'], arnOf(functions(base.json).mcp[0]));

    const [, stage] = only(base.json, 'AWS::ApiGatewayV2::Stage');
    assert.equal(stage['Properties']['StageName'], '$default');
    assert.deepEqual(stage['Properties']['DefaultRouteSettings'], {
      ThrottlingRateLimit: CDK_CONTEXT['throttleRateLimit'],
      ThrottlingBurstLimit: CDK_CONTEXT['throttleBurstLimit'],
    });
    const destination = stage['Properties']['AccessLogSettings']['DestinationArn'];
    const logGroup = base.json['Resources'][destination['Fn::GetAtt'][0]];
    assert.equal(logGroup['Type'], 'AWS::Logs::LogGroup');
    assert.ok(logGroup['Properties']['RetentionInDays'] > 0);
    const format = JSON.parse(stage['Properties']['AccessLogSettings']['Format']) as Json;
    assert.ok(format['requestId'] && format['status']);
  });

  it('is open without JWT context, and says so in its outputs and in a synth warning', () => {
    assert.equal(resourcesOf(base.json, 'AWS::ApiGatewayV2::Authorizer').length, 0);
    const [, route] = only(base.json, 'AWS::ApiGatewayV2::Route');
    assert.ok(route['Properties']['AuthorizationType'] === undefined || route['Properties']['AuthorizationType'] === 'NONE');
    const outputs = Object.values(base.json['Outputs'] as Record<string, Json>);
    assert.ok(outputs.some((output) => String(output['Value']).startsWith('OPEN')), 'an output says the endpoint is OPEN');
    assert.ok(warnings(base).some((w) => w.includes(OPEN_ENDPOINT_WARNING)), 'synth warns that the endpoint is open');
  });

  it('requires a JWT from the configured issuer and audience when given', () => {
    const [authorizerId, authorizer] = only(jwt.json, 'AWS::ApiGatewayV2::Authorizer');
    assert.equal(authorizer['Properties']['AuthorizerType'], 'JWT');
    assert.deepEqual(authorizer['Properties']['JwtConfiguration'], { Issuer: 'https://issuer.example.com/', Audience: ['mcp-tasks', 'other-client'] });
    assert.deepEqual(authorizer['Properties']['IdentitySource'], ['$request.header.Authorization']);
    const [, route] = only(jwt.json, 'AWS::ApiGatewayV2::Route');
    assert.equal(route['Properties']['AuthorizationType'], 'JWT');
    assert.deepEqual(route['Properties']['AuthorizerId'], refTo(authorizerId));
    assert.ok(!warnings(jwt).some((w) => w.includes(OPEN_ENDPOINT_WARNING)));
    const outputs = Object.values(jwt.json['Outputs'] as Record<string, Json>);
    assert.ok(!outputs.some((output) => String(output['Value']).startsWith('OPEN')));
  });

  it('outputs the endpoint URL', () => {
    const outputs = Object.values(base.json['Outputs'] as Record<string, Json>);
    assert.ok(outputs.some((output) => JSON.stringify(output['Value']).includes('/mcp')));
  });
});

describe('operations', () => {
  it('alarms on the DLQ, dead-lettered tasks, worker errors, queue age and API 5xx', () => {
    const alarms = resourcesOf(base.json, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm['Properties'] as Json);
    assert.equal(alarms.length, 5);
    const metricsOf = (alarm: Json): Array<{ name: string; namespace: string }> =>
      alarm['Metrics']
        ? (alarm['Metrics'] as Json[]).filter((m) => m['MetricStat']).map((m) => ({ name: m['MetricStat']['Metric']['MetricName'], namespace: m['MetricStat']['Metric']['Namespace'] }))
        : [{ name: alarm['MetricName'], namespace: alarm['Namespace'] }];
    const all = alarms.map(metricsOf);
    const has = (namespace: string, names: string[]) =>
      all.some((metrics) => names.every((name) => metrics.some((m) => m.name === name && m.namespace === namespace)));
    assert.ok(has('AWS/SQS', ['ApproximateNumberOfMessagesVisible', 'ApproximateNumberOfMessagesNotVisible']), 'DLQ not empty');
    assert.ok(has('AWS/SQS', ['ApproximateAgeOfOldestMessage']), 'age of oldest message');
    assert.ok(has('AWS/Lambda', ['Errors']), 'worker errors');
    assert.ok(has('AWS/Lambda', ['Invocations']), 'dead-lettered tasks');
    assert.ok(has('AWS/ApiGateway', ['5xx']), 'API 5xx');
    for (const alarm of alarms) assert.equal(alarm['TreatMissingData'], 'notBreaching');
  });

  it('watches the dead-letter queue, and the worker queue for age', () => {
    const { queue: [queueId], deadLetter: [deadLetterId] } = queues(base.json);
    const ageAlarm = resourcesOf(base.json, 'AWS::CloudWatch::Alarm').find(([, a]) => a['Properties']['MetricName'] === 'ApproximateAgeOfOldestMessage')!;
    assert.deepEqual(ageAlarm[1]['Properties']['Dimensions'], [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }]);
    const dlqAlarm = resourcesOf(base.json, 'AWS::CloudWatch::Alarm').find(([, a]) => a['Properties']['Metrics'])!;
    assert.ok(JSON.stringify(dlqAlarm[1]['Properties']['Metrics']).includes(JSON.stringify({ 'Fn::GetAtt': [deadLetterId, 'QueueName'] })));
  });

  it('has a dashboard with task counts, queue depth and API latency', () => {
    const [, dashboard] = only(base.json, 'AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboard['Properties']['DashboardBody']);
    for (const text of ['task-created', 'outcome', 'ApproximateNumberOfMessagesVisible', 'ApproximateAgeOfOldestMessage', 'Latency', '5xx']) {
      assert.ok(body.includes(text), `dashboard shows ${text}`);
    }
  });
});

function warnings(s: Synthesized): string[] {
  return s.report.pluginReports.flatMap((report) => report.violations.filter((v) => v.severity === 'warning').map((v) => v.ruleName));
}

/** Every `Validations.of(x).acknowledge(...)` in the tree: path, rule id and reason. */
function acknowledgements(app: App): Array<{ path: string; id: string; reason: string }> {
  const found: Array<{ path: string; id: string; reason: string }> = [];
  const visit = (node: IConstruct) => {
    for (const entry of node.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) found.push({ path: node.node.path, id: id.replace(/^annotation::/i, ''), reason });
    }
    for (const child of node.node.children) visit(child);
  };
  visit(app);
  return found;
}

describe('cdk-nag (AwsSolutions)', () => {
  for (const variant of ['default', 'jwt'] as const) {
    it(`reports no unacknowledged errors or warnings (${variant} stack)`, () => {
      const s = variant === 'default' ? base : jwt;
      const findings = s.report.pluginReports
        .filter((report) => report.pluginName === 'AwsSolutions')
        .flatMap((report) => report.violations.map((v) => `${v.severity} ${v.ruleName} at ${v.violatingConstructs.map((c) => c.constructPath).join(', ')}`));
      assert.deepEqual(findings, []);
    });
  }

  it('acknowledges only findings that exist, each with a reason', () => {
    // Run the pack with acknowledgements ignored to see the raw findings.
    const pack = new AwsSolutionsChecks();
    (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
    const raw = pack.validateScope(base.app).violations.flatMap((v) => v.violatingResources.map((r) => ({ rule: v.ruleName, path: r.constructPath ?? '' })));
    const acks = acknowledgements(base.app).filter((ack) => ack.id.startsWith('AwsSolutions-'));
    assert.ok(acks.length > 0);
    for (const ack of acks) {
      assert.ok(ack.reason.length > 40, `${ack.id} at ${ack.path} needs a written reason`);
      assert.ok(raw.some((f) => f.rule === ack.id && (f.path === ack.path || f.path.startsWith(`${ack.path}/`))), `${ack.id} at ${ack.path} acknowledges nothing`);
    }
    const summary = [...new Map(acks.map((ack) => [ack.id.replace(/<[^>]+>/, '<table>'), ack.reason])).entries()];
    console.log(`cdk-nag: ${raw.length} raw findings, all acknowledged (${acks.length} acknowledgements):`);
    for (const [id, reason] of summary) console.log(`  ${id}: ${reason}`);
  });
});

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

      // Tokens (Ref, GetAtt) have no value before deployment: placeholders stand in.
      const variables = fn['Properties']['Environment']['Variables'] as Json;
      const environment = Object.fromEntries(
        Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : `placeholder-${name.toLowerCase()}`]),
      );
      const child = spawnSync(
        nodeBinary,
        ['--input-type=module', '-e', `const m = await import(${JSON.stringify(pathToFileURL(bundle).href)}); if (typeof m.handler !== 'function') process.exit(2);`],
        { cwd: assetDir, env: { PATH: process.env['PATH'] ?? '', ...environment, AWS_REGION: 'us-east-1' }, encoding: 'utf8', timeout: 30_000 },
      );
      assert.equal(child.status, 0, `${id} failed to start (exit ${child.status}):\n${child.stderr}`);
      sizes.push(`${id}: ${statSync(bundle).size} bytes (index.mjs), ${statSync(`${bundle}.map`).size} bytes (source map)`);
    }
    const version = spawnSync(nodeBinary, ['--version'], { encoding: 'utf8' }).stdout.trim();
    console.log(`bundle sizes (started with Node ${version}):\n  ${sizes.join('\n  ')}`);
  });
});

describe('context', () => {
  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an unknown toolset', { toolset: 'everything' }, /toolset/],
    ['an issuer without an audience', { jwtIssuer: 'https://issuer.example.com/' }, /jwtIssuer.*jwtAudience/],
    ['a non-https issuer', { jwtIssuer: 'http://issuer.example.com/', jwtAudience: 'a' }, /https/],
    ['an unknown removal policy', { removalPolicy: 'snapshot' }, /removalPolicy/],
    ['a retention CloudWatch does not offer', { logRetentionDays: 2 }, /logRetentionDays/],
  ];
  for (const [what, context, message] of bad) {
    it(`rejects ${what} before building anything`, () => {
      assert.throws(() => createApp({ context: { ...CDK_CONTEXT, ...context, 'aws:cdk:bundling-stacks': [] } }), message);
    });
  }
});
