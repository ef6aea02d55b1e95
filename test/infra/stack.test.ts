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
import { join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Duration, Validations, type App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { createApp } from '../../infra/app.ts';
import { OPEN_ENDPOINT_WARNING } from '../../infra/constructs/api.ts';
import { FAILED_TASK_RATE_THRESHOLD } from '../../infra/constructs/operations.ts';
import { bundlingFor, FUNCTION_ENTRIES, LAMBDA_RUNTIME } from '../../infra/constructs/task-function.ts';
import { MAX_RECEIVE_COUNT } from '../../infra/constructs/task-queue.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY, WORKER_BATCH_SIZE } from '../../infra/event-sources.ts';
import { durableTimings, HANDOVER_RESERVE, timingProblems, VISIBILITY_TIMEOUT_FACTOR, type DurableTimings } from '../../infra/timings.ts';
import { DEFAULT_SETTINGS, ENV } from '../../shared/config.ts';
import { METRICS_NAMESPACE } from '../../shared/metrics.ts';
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
  return {
    mcp: byDescription('MCP endpoint'),
    worker: byDescription('runs queued tasks'),
    deadLetter: byDescription('dead-lettered'),
    sweeper: byDescription('sweeper'),
  };
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
    sweepIntervalMinutes: 5,
    // The optional parts, off by default, are on here.
    tracing: true,
    dashboard: true,
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

  it('deploys the event source settings the local stack emulates (one source of truth)', () => {
    const { worker: [workerId] } = functions(base.json);
    const [, worker] = only(base.json, 'AWS::Lambda::EventSourceMapping', (m) => m['Properties']['FunctionName']['Ref'] === workerId);
    assert.equal(worker['Properties']['BatchSize'], WORKER_BATCH_SIZE);
    // cdk.json's context repeats the default for operators to see; the local stack uses the constant.
    assert.equal(CDK_CONTEXT['workerMaxConcurrency'], DEFAULT_WORKER_MAX_CONCURRENCY);
    assert.equal(worker['Properties']['ScalingConfig']['MaximumConcurrency'], DEFAULT_WORKER_MAX_CONCURRENCY);
  });

  it('feeds the dead-letter handler from the DLQ, also with partial batch responses', () => {
    // No event source mapping (its idle pollers cost more at rest than the
    // rest of the stack): the sweep schedule invokes the handler, which
    // receives from the DLQ named in its environment and deletes only the
    // messages it handled (functions/dlq/app.ts; test/integration/operations.test.ts).
    const { deadLetter: [handlerId, handler] } = functions(base.json);
    const { deadLetter: [deadLetterId] } = queues(base.json);
    assert.equal(resourcesOf(base.json, 'AWS::Lambda::EventSourceMapping').filter(([, m]) => m['Properties']['FunctionName']['Ref'] === handlerId).length, 0);
    assert.deepEqual(handler['Properties']['Environment']['Variables'][ENV.deadLetterQueueUrl], refTo(deadLetterId));
    const [, rule] = only(base.json, 'AWS::Events::Rule');
    assert.ok((rule['Properties']['Targets'] as Json[]).some((t) => JSON.stringify(t['Arn']) === JSON.stringify(arnOf(handlerId))));
    const actions = statementsOf(base.json, roleLogicalIdOf(handler)).filter((st) => JSON.stringify(st['Resource']) === JSON.stringify(arnOf(deadLetterId))).flatMap((st) => asList<string>(st['Action']));
    assert.ok(actions.includes('sqs:ReceiveMessage') && actions.includes('sqs:DeleteMessage'));
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

  it('sets the durable-execution timings so that they fit each other (as deployed)', () => {
    const [, worker] = functions(base.json).worker;
    const [, sweeper] = functions(base.json).sweeper;
    const { queue: [, queue] } = queues(base.json);
    const [, rule] = only(base.json, 'AWS::Events::Rule');
    const variables = worker['Properties']['Environment']['Variables'] as Json;
    const leaseMs = Number(variables[ENV.leaseMs]);
    const graceMs = Number(variables[ENV.sweepGraceMs]);
    const budgetMs = Number(variables[ENV.invocationBudgetMs]);
    const timeoutMs = (worker['Properties']['Timeout'] as number) * 1000;
    const visibilityMs = (queue['Properties']['VisibilityTimeout'] as number) * 1000;
    const intervalMs = Number(/^rate\((\d+) minutes?\)$/.exec(rule['Properties']['ScheduleExpression'])![1]) * 60_000;
    for (const value of [leaseMs, graceMs, budgetMs]) assert.ok(Number.isSafeInteger(value) && value > 0);

    // The lease is renewed by heartbeats, so it need not outlive the invocation; the
    // visibility timeout must outlive both, so a redelivery after a crash finds the lease expired.
    assert.ok(visibilityMs >= timeoutMs + leaseMs, 'a redelivery must find the lease of a crashed invocation expired');
    assert.ok(visibilityMs > leaseMs);
    assert.ok(leaseMs > 3 * DEFAULT_SETTINGS.cancelCheckMs, 'a heartbeat tick in each third of the lease');
    // A step started just before the budget runs out still ends before the timeout.
    assert.ok(budgetMs + HANDOVER_RESERVE.toMilliseconds() <= timeoutMs, `budget ${budgetMs} ms + reserve must fit the ${timeoutMs} ms timeout`);
    // After a crash the sweeper recovers the task before SQS redelivers it.
    assert.ok(leaseMs + graceMs + intervalMs < visibilityMs);
    assert.ok((sweeper['Properties']['Timeout'] as number) * 1000 < intervalMs, 'sweeper runs do not overlap');
  });
});

describe('timings', () => {
  const valid = durableTimings();
  const cancelCheckMs = DEFAULT_SETTINGS.cancelCheckMs;

  it('no longer require the lease to outlast the worker timeout (heartbeats renew it)', () => {
    assert.ok(valid.lease.toMilliseconds() < valid.workerTimeout.toMilliseconds());
    assert.deepEqual(timingProblems(valid, cancelCheckMs), []);
  });

  const broken: Array<[string, Partial<DurableTimings>, RegExp]> = [
    ['a visibility timeout under 6 × the worker timeout', { visibilityTimeout: Duration.minutes(29) }, /at least 6 × the worker timeout/],
    ['a visibility timeout the lease could outlast', { lease: Duration.minutes(26) }, /worker timeout plus the lease/],
    ['a lease too short for heartbeats', { lease: Duration.seconds(15) }, /heartbeat ticks/],
    ['a budget that leaves no hand-over reserve', { invocationBudget: Duration.seconds(280) }, /hand-over reserve/],
    ['a sweep slower than redelivery', { sweepInterval: Duration.minutes(25) }, /shorter than the visibility timeout/],
    ['a sweeper timeout as long as the interval', { sweeperTimeout: Duration.minutes(1) }, /sweep interval/],
  ];
  for (const [what, change, message] of broken) {
    it(`reject ${what}`, () => {
      const problems = timingProblems({ ...valid, ...change }, cancelCheckMs);
      assert.equal(problems.length, 1, problems.join('; '));
      assert.match(problems[0]!, message);
    });
  }
});

describe('sweeper', () => {
  it('runs on a schedule, every minute by default and as configured', () => {
    const [sweeperId] = functions(base.json).sweeper;
    const [ruleId, rule] = only(base.json, 'AWS::Events::Rule');
    assert.equal(rule['Properties']['ScheduleExpression'], `rate(${CDK_CONTEXT['sweepIntervalMinutes']} minute)`);
    assert.equal(rule['Properties']['State'], 'ENABLED');
    // The sweeper, and the dead-letter handler that drains the DLQ on the same schedule.
    const [deadLetterId] = functions(base.json).deadLetter;
    const targets = rule['Properties']['Targets'] as Json[];
    assert.deepEqual(targets.map((t) => t['Arn']), [arnOf(sweeperId), arnOf(deadLetterId)]);
    // EventBridge may invoke the sweeper, from this rule only.
    const [, permission] = only(base.json, 'AWS::Lambda::Permission', (p) => p['Properties']['Principal'] === 'events.amazonaws.com' && JSON.stringify(p['Properties']['FunctionName']) === JSON.stringify(arnOf(sweeperId)));
    assert.deepEqual(permission['Properties']['FunctionName'], arnOf(sweeperId));
    assert.deepEqual(permission['Properties']['SourceArn'], arnOf(ruleId));

    const [, configured] = only(jwt.json, 'AWS::Events::Rule');
    assert.equal(configured['Properties']['ScheduleExpression'], 'rate(5 minutes)');
  });

  it('is not retried by Lambda: the next scheduled run is the retry', () => {
    const [sweeperId] = functions(base.json).sweeper;
    const [, config] = only(base.json, 'AWS::Lambda::EventInvokeConfig', (c) => c['Properties']['FunctionName']['Ref'] === sweeperId);
    assert.equal(config['Properties']['MaximumRetryAttempts'], 0);
    assert.equal(config['Properties']['MaximumEventAgeInSeconds'], 60 * (CDK_CONTEXT['sweepIntervalMinutes'] as number));
  });

  it('may query the active-tasks index, update the table and send to the task queue, nothing more', () => {
    const [tableId] = only(base.json, 'AWS::DynamoDB::Table');
    const { queue: [queueId] } = queues(base.json);
    const [, sweeper] = functions(base.json).sweeper;
    const statements = statementsOf(base.json, roleLogicalIdOf(sweeper));
    const on = (prefix: string) => statements.filter((s) => asList<string>(s['Action']).some((a) => a.startsWith(prefix)));

    const dynamo = on('dynamodb:').map((s) => ({ actions: asList<string>(s['Action']), resource: s['Resource'] }));
    assert.deepEqual(
      dynamo.sort((a, b) => a.actions[0]!.localeCompare(b.actions[0]!)),
      [
        // GetItem: ending an expired wait for input reads the row it rewrites.
        { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], resource: arnOf(tableId) },
        { actions: ['dynamodb:Query'], resource: { 'Fn::Join': ['', [arnOf(tableId), `/index/${ACTIVE_INDEX.name}`]] } },
      ],
    );

    const sqs = on('sqs:');
    assert.ok(sqs.length > 0);
    for (const statement of sqs) assert.deepEqual(statement['Resource'], arnOf(queueId));
    const sqsActions = sqs.flatMap((s) => asList<string>(s['Action']));
    assert.ok(sqsActions.includes('sqs:SendMessage'));
    assert.ok(!sqsActions.some((a) => ['sqs:ReceiveMessage', 'sqs:DeleteMessage'].includes(a)));

    // Besides: its own log group, and X-Ray.
    const others = statements.filter((s) => !asList<string>(s['Action']).some((a) => a.startsWith('dynamodb:') || a.startsWith('sqs:')));
    for (const statement of others) assert.ok(asList<string>(statement['Action']).every((a) => a.startsWith('logs:') || a.startsWith('xray:')), JSON.stringify(statement));
  });

  it('has no event source: the schedule is its only trigger', () => {
    const [sweeperId] = functions(base.json).sweeper;
    assert.equal(resourcesOf(base.json, 'AWS::Lambda::EventSourceMapping').filter(([, m]) => m['Properties']['FunctionName']['Ref'] === sweeperId).length, 0);
  });
});

describe('functions', () => {
  it('run on the one runtime constant, ARM64, with active tracing and their own log group', () => {
    const fns = resourcesOf(base.json, 'AWS::Lambda::Function');
    // The four task functions and the requestState key's custom resource.
    assert.equal(fns.length, 5);
    // Tracing is a setting, off by default (cost: see the README); on when asked for.
    for (const [id, fn] of resourcesOf(jwt.json, 'AWS::Lambda::Function')) assert.deepEqual(fn['Properties']['TracingConfig'], { Mode: 'Active' }, id);
    for (const [id, fn] of fns) {
      const props = fn['Properties'];
      assert.equal(props['Runtime'], LAMBDA_RUNTIME.name, id);
      assert.deepEqual(props['Architectures'], ['arm64'], id);
      assert.equal(props['TracingConfig'], undefined, id);
      assert.equal(props['Handler'], 'index.handler', id);
      const logGroupId = props['LoggingConfig']['LogGroup']['Ref'] as string;
      const logGroup = base.json['Resources'][logGroupId];
      assert.equal(logGroup['Type'], 'AWS::Logs::LogGroup', id);
      assert.equal(logGroup['Properties']['RetentionInDays'], CDK_CONTEXT['logRetentionDays'], id);
    }
  });

  it('get environment variables named by ENV, pointing at this stack\'s table and queue, with the same timings', () => {
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
    // Every function that writes a task applies the store's policy (sweepAt = lease end or resume + grace).
    const timings = Object.values(functions(base.json)).map(([, fn]) => {
      const variables = fn['Properties']['Environment']['Variables'] as Json;
      return [variables[ENV.leaseMs], variables[ENV.sweepGraceMs], variables[ENV.invocationBudgetMs]];
    });
    for (const each of timings) assert.deepEqual(each, timings[0]);
    // The worker's redelivery delay is the queue's visibility timeout, so the sweeper never pre-empts SQS after an error.
    const [, worker] = functions(base.json).worker;
    const visibilityMs = (queues(base.json).queue[1]['Properties']['VisibilityTimeout'] as number) * 1000;
    assert.equal(Number(worker['Properties']['Environment']['Variables'][ENV.redeliveryMs]), visibilityMs);
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

  it('grants table access on the table and its indexes only, to the MCP function, the worker and the DLQ handler', () => {
    const [tableId] = only(base.json, 'AWS::DynamoDB::Table');
    const { mcp, worker, deadLetter } = functions(base.json);
    for (const [id, fn] of [mcp, worker, deadLetter]) {
      const dynamo = statementsOf(base.json, roleLogicalIdOf(fn)).filter((s) => asList<string>(s['Action']).some((a) => a.startsWith('dynamodb:')));
      assert.equal(dynamo.length, 1, id);
      assert.deepEqual(dynamo[0]!['Resource'], [arnOf(tableId), { 'Fn::Join': ['', [arnOf(tableId), '/index/*']] }], id);
      assert.ok(asList<string>(dynamo[0]!['Action']).includes('dynamodb:UpdateItem'), id);
    }
  });

  it('lets the MCP function, the worker and the sweeper send to the task queue, and each consumer receive from its own queue only', () => {
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
  it('alarms on the DLQ, dead-lettered tasks, worker errors, sweeper errors, queue age and API 5xx', () => {
    const alarms = resourcesOf(base.json, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm['Properties'] as Json);
    // Six alarms of one metric each ($0.10 apiece at list price): the failed-task
    // rate and dead-lettered messages come from the task metrics and the DLQ's age.
    assert.equal(alarms.length, 6);
    for (const alarm of alarms) assert.equal(alarm['Metrics'], undefined, 'one metric per alarm');
    const metricsOf = (alarm: Json): Array<{ name: string; namespace: string }> =>
      alarm['Metrics']
        ? (alarm['Metrics'] as Json[]).filter((m) => m['MetricStat']).map((m) => ({ name: m['MetricStat']['Metric']['MetricName'], namespace: m['MetricStat']['Metric']['Namespace'] }))
        : [{ name: alarm['MetricName'], namespace: alarm['Namespace'] }];
    const all = alarms.map(metricsOf);
    const has = (namespace: string, names: string[]) =>
      all.some((metrics) => names.every((name) => metrics.some((m) => m.name === name && m.namespace === namespace)));
    assert.ok(has('AWS/SQS', ['ApproximateAgeOfOldestMessage']), 'age of oldest message');
    assert.ok(has('AWS/Lambda', ['Errors']), 'worker errors');
    assert.ok(has(METRICS_NAMESPACE, ['TaskFailed']), 'failed-task rate');
    assert.ok(has('AWS/ApiGateway', ['5xx']), 'API 5xx');
    const failedRate = alarms.find((a) => a['MetricName'] === 'TaskFailed')!;
    assert.equal(failedRate['Statistic'], 'Average');
    assert.equal(failedRate['Threshold'], FAILED_TASK_RATE_THRESHOLD);
    assert.equal(failedRate['Dimensions'], undefined, 'the metric the functions emit has no dimensions');
    for (const alarm of alarms) assert.equal(alarm['TreatMissingData'], 'notBreaching');
  });

  it('alarms when the sweeper fails in two consecutive periods', () => {
    const errorAlarms = resourcesOf(base.json, 'AWS::CloudWatch::Alarm').filter(([, a]) => a['Properties']['MetricName'] === 'Errors');
    const [sweeperId] = functions(base.json).sweeper;
    const sweeper = errorAlarms.filter(([, a]) => JSON.stringify(a['Properties']['Dimensions']) === JSON.stringify([{ Name: 'FunctionName', Value: refTo(sweeperId) }]));
    assert.equal(sweeper.length, 1);
    const props = sweeper[0]![1]['Properties'];
    assert.equal(props['Namespace'], 'AWS/Lambda');
    assert.equal(props['Statistic'], 'Sum');
    assert.equal(props['Threshold'], 1);
    assert.equal(props['ComparisonOperator'], 'GreaterThanOrEqualToThreshold');
    assert.equal(props['EvaluationPeriods'], 2);
    assert.equal(props['DatapointsToAlarm'], 2);
    assert.ok(props['Period'] >= 60 * (CDK_CONTEXT['sweepIntervalMinutes'] as number));
  });

  it('watches the dead-letter queue, and the worker queue for age', () => {
    const { queue: [queueId], deadLetter: [deadLetterId] } = queues(base.json);
    const ageAlarm = resourcesOf(base.json, 'AWS::CloudWatch::Alarm').find(([, a]) => a['Properties']['MetricName'] === 'ApproximateAgeOfOldestMessage' && a['Properties']['Threshold'] > 900)!;
    assert.deepEqual(ageAlarm[1]['Properties']['Dimensions'], [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }]);
    const ageAlarms = resourcesOf(base.json, 'AWS::CloudWatch::Alarm').filter(([, a]) => a['Properties']['MetricName'] === 'ApproximateAgeOfOldestMessage');
    assert.equal(ageAlarms.length, 2);
    assert.ok(ageAlarms.some(([, a]) => JSON.stringify(a['Properties']['Dimensions']) === JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetterId, 'QueueName'] } }])), 'DLQ not drained');
  });

  it('has a dashboard with task counts, queue depth and API latency', () => {
    // Optional ($3 a month): none by default, one with `dashboard: true`.
    assert.equal(resourcesOf(base.json, 'AWS::CloudWatch::Dashboard').length, 0);
    const [, dashboard] = only(jwt.json, 'AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboard['Properties']['DashboardBody']);
    for (const text of ['ApproximateNumberOfMessagesVisible', 'ApproximateAgeOfOldestMessage', 'Latency', '5xx']) {
      assert.ok(body.includes(text), `dashboard shows ${text}`);
    }
    // Task counts read the embedded metrics, not the logs.
    assert.deepEqual(dashboardQueries(dashboard), [], 'no Logs Insights queries');
    const metrics = dashboardMetrics(dashboard).filter((m) => m[0] === METRICS_NAMESPACE);
    assert.ok(metrics.some((m) => m[1] === 'TasksCreated'), 'dashboard counts created tasks');
    for (const status of ['completed', 'failed', 'cancelled']) {
      assert.ok(metrics.some((m) => m[1] === 'TasksEnded' && m[2] === 'status' && m[3] === status), `dashboard counts ${status} tasks`);
    }
    for (const name of ['TaskFailed', 'TaskDuration', 'TimeQueued', 'TaskRetries', 'TasksDeadLettered']) assert.ok(metrics.some((m) => m[1] === name), `dashboard shows ${name}`);
    assert.ok(!body.includes('outcome'), 'counts follow task-ended lines, not per-run ones');
  });
});

/** The widgets of a dashboard (deploy-time tokens in its body replaced by a placeholder). */
function dashboardWidgets(dashboard: Json): Json[] {
  const raw = dashboard['Properties']['DashboardBody'];
  const parts = (typeof raw === 'string' ? [raw] : raw['Fn::Join'][1]) as unknown[];
  return (JSON.parse(parts.map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('')) as { widgets: Json[] }).widgets;
}

/** The Logs Insights queries of a dashboard. */
function dashboardQueries(dashboard: Json): string[] {
  return dashboardWidgets(dashboard).filter((w) => w['type'] === 'log').map((w) => String(w['properties']['query']));
}

/** The metrics of a dashboard's graphs, as CloudWatch's `[namespace, name, dimension, value, …, options]` arrays. */
function dashboardMetrics(dashboard: Json): unknown[][] {
  return dashboardWidgets(dashboard).filter((w) => w['type'] === 'metric').flatMap((w) => (w['properties']['metrics'] ?? []) as unknown[][]);
}

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

describe('bundle contents', () => {
  /** npm packages a function's bundle contains, from its source map. */
  const packagesIn = (fn: Json): Set<string> => {
    const key = fn['Properties']['Code']['S3Key'] as string;
    const map = JSON.parse(readFileSync(join(base.outdir, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs.map'), 'utf8')) as { sources: string[] };
    return new Set(
      map.sources
        .filter((source) => source.includes('node_modules/'))
        .map((source) => {
          const [first, second] = source.slice(source.lastIndexOf('node_modules/') + 'node_modules/'.length).split('/');
          return first!.startsWith('@') ? `${first}/${second}` : first!;
        }),
    );
  };

  /** The project's own source files a function's bundle contains, from its source map. */
  const ownSourcesIn = (fn: Json): string[] => {
    const key = fn['Properties']['Code']['S3Key'] as string;
    const assetDir = join(base.outdir, `asset.${key.replace(/\.zip$/, '')}`);
    const map = JSON.parse(readFileSync(join(assetDir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
    return map.sources.filter((source) => !source.includes('node_modules/')).map((source) => relative(ROOT, resolve(assetDir, source)));
  };

  it('of the default (product) deployment carry the product tools and no conformance or test fixture', () => {
    const fns = functions(base.json);
    for (const name of ['mcp', 'worker'] as const) {
      const sources = ownSourcesIn(fns[name][1]);
      assert.ok(sources.some((source) => source.startsWith('functions/tools/examples/')), `${name} bundles the product tools: ${sources.join(', ')}`);
      const fixtures = sources.filter((source) => /^functions\/tools\/(conformance|testing)\//.test(source));
      assert.deepEqual(fixtures, [], `${name} must not bundle fixtures`);
    }
    for (const name of ['deadLetter', 'sweeper'] as const) {
      assert.deepEqual(ownSourcesIn(fns[name][1]).filter((source) => source.startsWith('functions/tools/')), [], `${name} bundles no tool`);
    }
  });

  it('of a deployment with the conformance toolset carry its fixtures (the toolset is fixed at build time)', async () => {
    const { build } = await import('esbuild');
    const bundling = bundlingFor({ [ENV.toolset]: 'all' });
    const result = await build({
      entryPoints: [join(ROOT, FUNCTION_ENTRIES.worker)],
      bundle: true,
      platform: 'node',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
      define: bundling.define ?? {},
    });
    const inputs = Object.keys(result.metafile.inputs);
    assert.ok(inputs.some((path) => path.startsWith('functions/tools/conformance/')), 'conformance fixtures bundled for toolset "all"');
    assert.ok(!inputs.some((path) => path.startsWith('functions/tools/testing/')), 'the durability fixtures never ship');
  });

  it('carry only the SDKs each function uses (the composition root is imported by path)', () => {
    const fns = functions(base.json);
    const expected: Record<keyof typeof fns, { has: string[]; lacks: string[] }> = {
      // The MCP function verifies tokens (jose); the local authorization server never ships.
      mcp: { has: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@modelcontextprotocol/server', 'zod', 'jose'], lacks: ['oidc-provider', 'koa'] },
      worker: { has: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', 'zod'], lacks: ['@modelcontextprotocol/server', 'jose', 'oidc-provider'] },
      sweeper: { has: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs'], lacks: ['zod', '@modelcontextprotocol/server', 'jose', 'oidc-provider'] },
      // It drains the DLQ itself (no event source mapping): the SQS client is its own.
      deadLetter: { has: ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs'], lacks: ['zod', '@modelcontextprotocol/server', 'jose', 'oidc-provider'] },
    };
    for (const [name, { has, lacks }] of Object.entries(expected) as Array<[keyof typeof fns, { has: string[]; lacks: string[] }]>) {
      const packages = packagesIn(fns[name][1]);
      for (const pkg of has) assert.ok(packages.has(pkg), `${name} bundles ${pkg}`);
      for (const pkg of lacks) assert.ok(!packages.has(pkg), `${name} must not bundle ${pkg}`);
    }
  });
});

describe('context', () => {
  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an unknown toolset', { toolset: 'everything' }, /toolset/],
    ['an issuer without an audience', { jwtIssuer: 'https://issuer.example.com/' }, /jwtIssuer.*jwtAudience/],
    ['a non-https issuer', { jwtIssuer: 'http://issuer.example.com/', jwtAudience: 'a' }, /https/],
    ['an unknown removal policy', { removalPolicy: 'snapshot' }, /removalPolicy/],
    ['a retention CloudWatch does not offer', { logRetentionDays: 2 }, /logRetentionDays/],
    ['a sweep interval that is not whole minutes', { sweepIntervalMinutes: 0.5 }, /sweepIntervalMinutes/],
    ['a tracing setting that is not a boolean', { tracing: 'yes' }, /tracing/],
    ['a dashboard setting that is not a boolean', { dashboard: 1 }, /dashboard/],
    ['a sweep interval slower than SQS redelivery', { sweepIntervalMinutes: 25 }, /sweepIntervalMinutes.*shorter than the visibility timeout/s],
  ];
  it('accepts the longest sweep interval the timings allow (24 minutes)', () => {
    assert.doesNotThrow(() => createApp({ context: { ...CDK_CONTEXT, sweepIntervalMinutes: 24, 'aws:cdk:bundling-stacks': [] } }));
  });
  for (const [what, context, message] of bad) {
    it(`rejects ${what} before building anything`, () => {
      assert.throws(() => createApp({ context: { ...CDK_CONTEXT, ...context, 'aws:cdk:bundling-stacks': [] } }), message);
    });
  }
});

// Issue 9, items 3 and 4: the requestState key and the allowed origins.
describe('requestState key and allowed origins', () => {
  it('creates the key as an SSM SecureString through a custom resource, and lets the MCP function read only that parameter', () => {
    const [customId, custom] = only(base.json, 'Custom::RequestStateKey');
    const parameterName = custom['Properties']['ParameterName'];
    assert.match(JSON.stringify(parameterName), /request-state-key/);
    // The value is made by the function, never in the template.
    assert.doesNotMatch(JSON.stringify(base.json), /"Type":"SecureString"/);
    const [creatorId, creator] = only(base.json, 'AWS::Lambda::Function', (fn) => String(fn['Properties']['Description']).includes('requestState sealing key'));
    assert.deepEqual(custom['Properties']['ServiceToken'], arnOf(creatorId));
    const creatorStatements = statementsOf(base.json, roleLogicalIdOf(creator));
    const write = creatorStatements.find((s) => asList(s['Action']).includes('ssm:PutParameter'));
    assert.ok(write, 'the creator may put the parameter');
    assert.deepEqual(asList(write['Action']).sort(), ['ssm:DeleteParameter', 'ssm:PutParameter']);
    assert.match(JSON.stringify(write['Resource']), /parameter\/.*request-state-key/);

    const [mcpId, mcp] = functions(base.json).mcp;
    assert.deepEqual(mcp['Properties']['Environment']['Variables'][ENV.stateKeyParameter], parameterName);
    const read = statementsOf(base.json, roleLogicalIdOf(mcp)).filter((s) => asList(s['Action']).some((a: string) => a.startsWith('ssm:')));
    assert.equal(read.length, 1);
    assert.deepEqual(asList(read[0]!['Action']), ['ssm:GetParameter']);
    assert.deepEqual(read[0]!['Resource'], write['Resource']);
    assert.ok(asList(mcp['DependsOn'] ?? []).includes(customId), `${mcpId} waits for the key`);
  });

  it('configures no CORS and no allowed origins by default', () => {
    const [, api] = only(base.json, 'AWS::ApiGatewayV2::Api');
    assert.equal(api['Properties']['CorsConfiguration'], undefined);
    assert.equal(functions(base.json).mcp[1]['Properties']['Environment']['Variables'][ENV.allowedOrigins], undefined);
  });

  it('drives CORS (preflight included) and the Origin check from one allowed-origins setting', () => {
    const origins = synth({ allowedOrigins: 'https://app.example.com,https://admin.example.com', 'aws:cdk:bundling-stacks': [] });
    const [, api] = only(origins.json, 'AWS::ApiGatewayV2::Api');
    const cors = api['Properties']['CorsConfiguration'];
    assert.deepEqual(cors['AllowOrigins'], ['https://app.example.com', 'https://admin.example.com']);
    assert.deepEqual(cors['AllowMethods'], ['POST']);
    for (const header of ['content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'authorization']) assert.ok(cors['AllowHeaders'].includes(header), header);
    assert.equal(functions(origins.json).mcp[1]['Properties']['Environment']['Variables'][ENV.allowedOrigins], 'https://app.example.com,https://admin.example.com');
    assert.throws(() => createApp({ context: { ...CDK_CONTEXT, allowedOrigins: 'app.example.com', 'aws:cdk:bundling-stacks': [] } }), /allowedOrigins/);
  });
});
