/**
 * The CDK stack's resources and their wiring: the task table, the queues and
 * the worker's event source, the durable-execution timings, the sweeper, the
 * functions, IAM and the HTTP API, asserting the properties behaviour depends
 * on. Alarms, cdk-nag and the context settings are in stack-operations.test.ts,
 * the bundles in bundles.test.ts; synthesis is shared (synth.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { OPEN_ENDPOINT_WARNING } from '../../infra/constructs/api.ts';
import { LAMBDA_RUNTIME } from '../../infra/constructs/task-function.ts';
import { MAX_RECEIVE_COUNT } from '../../infra/constructs/task-queue.ts';
import { CONTEXT } from '../../infra/context.ts';
import { DEFAULT_WORKER_MAX_CONCURRENCY, WORKER_BATCH_SIZE } from '../../infra/event-sources.ts';
import { type DurableTimings, durableTimings, HANDOVER_RESERVE, timingProblems, VISIBILITY_TIMEOUT_FACTOR } from '../../infra/timings.ts';
import { DEFAULT_SETTINGS, ENV } from '../../shared/config.ts';
import { ACTIVE_INDEX, LIST_INDEX, TABLE_KEYS, TTL_ATTRIBUTE } from '../../shared/tasks/dynamodb/index.ts';
import {
  arnOf,
  asList,
  functions,
  type Json,
  only,
  queues,
  refTo,
  resourcesOf,
  roleLogicalIdOf,
  scheduleRule,
  statementsOf,
  templateStacks,
  warnings,
} from './synth.ts';

const stacks = templateStacks();

/** The MCP endpoint's route (the console's have a function of their own: test/infra/console.test.ts). */
const isMcpRoute = (route: Json) => String(route['Properties']['RouteKey']).includes('/mcp');

describe('task table', () => {
  it('uses the key schema, TTL attribute and sparse index the code uses', () => {
    const [, table] = only(stacks.base.json, 'AWS::DynamoDB::Table');
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
      {
        IndexName: LIST_INDEX.name,
        KeySchema: [
          { AttributeName: LIST_INDEX.partition, KeyType: 'HASH' },
          { AttributeName: LIST_INDEX.sort, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    const types = Object.fromEntries((props['AttributeDefinitions'] as Json[]).map((d) => [d['AttributeName'], d['AttributeType']]));
    assert.deepEqual(types, {
      [TABLE_KEYS.partition]: 'S',
      [TABLE_KEYS.sort]: 'S',
      [ACTIVE_INDEX.partition]: 'S',
      [ACTIVE_INDEX.sort]: 'N',
      [LIST_INDEX.partition]: 'S',
      [LIST_INDEX.sort]: 'S',
    });
  });

  it('is on demand, recoverable and encrypted with the AWS managed KMS key', () => {
    stacks.base.template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      // SSEEnabled without a key id is KMS with the AWS managed key (aws/dynamodb).
      SSESpecification: { SSEEnabled: true, KMSMasterKeyId: Match.absent() },
    });
  });

  it('is retained and deletion-protected by default, destroyable when configured', () => {
    const [, kept] = only(stacks.base.json, 'AWS::DynamoDB::Table');
    assert.equal(kept['DeletionPolicy'], 'Retain');
    assert.equal(kept['Properties']['DeletionProtectionEnabled'], true);
    const [, destroyed] = only(stacks.jwt.json, 'AWS::DynamoDB::Table');
    assert.equal(destroyed['DeletionPolicy'], 'Delete');
    assert.equal(destroyed['Properties']['DeletionProtectionEnabled'], false);
  });
});

describe('task queue and worker', () => {
  it('redrives to an encrypted dead-letter queue after MAX_RECEIVE_COUNT deliveries', () => {
    const {
      queue: [, queue],
      deadLetter: [deadLetterId, deadLetter],
    } = queues(stacks.base.json);
    assert.deepEqual(queue['Properties']['RedrivePolicy'], {
      deadLetterTargetArn: arnOf(deadLetterId),
      maxReceiveCount: MAX_RECEIVE_COUNT,
    });
    assert.equal(MAX_RECEIVE_COUNT, 5);
    for (const q of [queue, deadLetter]) assert.equal(q['Properties']['SqsManagedSseEnabled'], true);
  });

  it('denies requests without TLS on both queues', () => {
    const {
      queue: [queueId],
      deadLetter: [deadLetterId],
    } = queues(stacks.base.json);
    for (const id of [queueId, deadLetterId]) {
      const [, policy] = only(stacks.base.json, 'AWS::SQS::QueuePolicy', (p) =>
        (p['Properties']['Queues'] as Json[]).some((q) => q['Ref'] === id),
      );
      const statements = policy['Properties']['PolicyDocument']['Statement'] as Json[];
      assert.ok(
        statements.some((s) => s['Effect'] === 'Deny' && s['Condition']?.['Bool']?.['aws:SecureTransport'] === 'false'),
        `queue ${id} must deny insecure transport`,
      );
    }
  });

  it('feeds the worker with partial batch responses and a maximum concurrency', () => {
    const {
      worker: [workerId],
    } = functions(stacks.base.json);
    const {
      queue: [queueId],
    } = queues(stacks.base.json);
    const [, mapping] = only(
      stacks.base.json,
      'AWS::Lambda::EventSourceMapping',
      (m) => m['Properties']['FunctionName']['Ref'] === workerId,
    );
    assert.deepEqual(mapping['Properties']['EventSourceArn'], arnOf(queueId));
    assert.deepEqual(mapping['Properties']['FunctionResponseTypes'], ['ReportBatchItemFailures']);
    assert.equal(mapping['Properties']['ScalingConfig']['MaximumConcurrency'], CONTEXT.workerMaxConcurrency.default);
    assert.ok(mapping['Properties']['BatchSize'] >= 1);
  });

  it('deploys the event source settings the local stack emulates (one source of truth)', () => {
    const {
      worker: [workerId],
    } = functions(stacks.base.json);
    const [, worker] = only(
      stacks.base.json,
      'AWS::Lambda::EventSourceMapping',
      (m) => m['Properties']['FunctionName']['Ref'] === workerId,
    );
    assert.equal(worker['Properties']['BatchSize'], WORKER_BATCH_SIZE);
    assert.equal(worker['Properties']['ScalingConfig']['MaximumConcurrency'], DEFAULT_WORKER_MAX_CONCURRENCY);
  });

  it('feeds the dead-letter handler from the DLQ, also with partial batch responses', () => {
    // No event source mapping (its idle pollers cost more at rest than the
    // rest of the stack): the sweep schedule invokes the handler, which
    // receives from the DLQ named in its environment and deletes only the
    // messages it handled (functions/dlq/app.ts; test/integration/operations.test.ts).
    const {
      deadLetter: [handlerId, handler],
    } = functions(stacks.base.json);
    const {
      deadLetter: [deadLetterId],
    } = queues(stacks.base.json);
    assert.equal(
      resourcesOf(stacks.base.json, 'AWS::Lambda::EventSourceMapping').filter(
        ([, m]) => m['Properties']['FunctionName']['Ref'] === handlerId,
      ).length,
      0,
    );
    assert.deepEqual(handler['Properties']['Environment']['Variables'][ENV.deadLetterQueueUrl], refTo(deadLetterId));
    const [, rule] = scheduleRule(stacks.base.json);
    assert.ok((rule['Properties']['Targets'] as Json[]).some((t) => JSON.stringify(t['Arn']) === JSON.stringify(arnOf(handlerId))));
    const actions = statementsOf(stacks.base.json, roleLogicalIdOf(handler))
      .filter((st) => JSON.stringify(st['Resource']) === JSON.stringify(arnOf(deadLetterId)))
      .flatMap((st) => asList<string>(st['Action']));
    assert.ok(actions.includes('sqs:ReceiveMessage') && actions.includes('sqs:DeleteMessage'));
  });

  it('gives each queue a visibility timeout of at least six times its consumer timeout', () => {
    const fns = functions(stacks.base.json);
    const {
      queue: [, queue],
      deadLetter: [, deadLetter],
    } = queues(stacks.base.json);
    const pairs: Array<[Json, Json]> = [
      [queue, fns.worker[1]],
      [deadLetter, fns.deadLetter[1]],
    ];
    for (const [q, fn] of pairs) {
      const visibility = q['Properties']['VisibilityTimeout'] as number;
      const timeout = fn['Properties']['Timeout'] as number;
      assert.ok(
        visibility >= VISIBILITY_TIMEOUT_FACTOR * timeout,
        `visibility ${visibility}s < ${VISIBILITY_TIMEOUT_FACTOR} × timeout ${timeout}s`,
      );
    }
  });

  it('sets the durable-execution timings so that they fit each other (as deployed)', () => {
    const [, worker] = functions(stacks.base.json).worker;
    const [, sweeper] = functions(stacks.base.json).sweeper;
    const {
      queue: [, queue],
    } = queues(stacks.base.json);
    const [, rule] = scheduleRule(stacks.base.json);
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
    assert.ok(
      budgetMs + HANDOVER_RESERVE.toMilliseconds() <= timeoutMs,
      `budget ${budgetMs} ms + reserve must fit the ${timeoutMs} ms timeout`,
    );
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
    const [sweeperId] = functions(stacks.base.json).sweeper;
    const [ruleId, rule] = scheduleRule(stacks.base.json);
    assert.equal(rule['Properties']['ScheduleExpression'], `rate(${CONTEXT.sweepIntervalMinutes.default} minute)`);
    assert.equal(rule['Properties']['State'], 'ENABLED');
    // The sweeper, and the dead-letter handler that drains the DLQ on the same schedule.
    const [deadLetterId] = functions(stacks.base.json).deadLetter;
    const targets = rule['Properties']['Targets'] as Json[];
    assert.deepEqual(
      targets.map((t) => t['Arn']),
      [arnOf(sweeperId), arnOf(deadLetterId)],
    );
    // EventBridge may invoke the sweeper, from this rule only.
    const [, permission] = only(
      stacks.base.json,
      'AWS::Lambda::Permission',
      (p) =>
        p['Properties']['Principal'] === 'events.amazonaws.com' &&
        JSON.stringify(p['Properties']['FunctionName']) === JSON.stringify(arnOf(sweeperId)),
    );
    assert.deepEqual(permission['Properties']['FunctionName'], arnOf(sweeperId));
    assert.deepEqual(permission['Properties']['SourceArn'], arnOf(ruleId));

    const [, configured] = scheduleRule(stacks.jwt.json);
    assert.equal(configured['Properties']['ScheduleExpression'], 'rate(5 minutes)');
  });

  it('is not retried by Lambda: the next scheduled run is the retry', () => {
    const [sweeperId] = functions(stacks.base.json).sweeper;
    const [, config] = only(
      stacks.base.json,
      'AWS::Lambda::EventInvokeConfig',
      (c) => c['Properties']['FunctionName']['Ref'] === sweeperId,
    );
    assert.equal(config['Properties']['MaximumRetryAttempts'], 0);
    assert.equal(config['Properties']['MaximumEventAgeInSeconds'], 60 * CONTEXT.sweepIntervalMinutes.default);
  });

  it('may query the active-tasks index, update the table and send to the task queue, nothing more', () => {
    const [tableId] = only(stacks.base.json, 'AWS::DynamoDB::Table');
    const {
      queue: [queueId],
    } = queues(stacks.base.json);
    const [, sweeper] = functions(stacks.base.json).sweeper;
    const statements = statementsOf(stacks.base.json, roleLogicalIdOf(sweeper));
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

    // Besides: its own log group, X-Ray, and the events of the waits it ends (test/infra/events.test.ts).
    const others = statements.filter((s) => !asList<string>(s['Action']).some((a) => a.startsWith('dynamodb:') || a.startsWith('sqs:')));
    for (const statement of others)
      assert.ok(
        asList<string>(statement['Action']).every((a) => a.startsWith('logs:') || a.startsWith('xray:') || a === 'events:PutEvents'),
        JSON.stringify(statement),
      );
  });

  it('has no event source: the schedule is its only trigger', () => {
    const [sweeperId] = functions(stacks.base.json).sweeper;
    assert.equal(
      resourcesOf(stacks.base.json, 'AWS::Lambda::EventSourceMapping').filter(
        ([, m]) => m['Properties']['FunctionName']['Ref'] === sweeperId,
      ).length,
      0,
    );
  });
});

describe('functions', () => {
  it('run on the one runtime constant, ARM64, without Lambda active tracing, and their own log group', () => {
    const fns = resourcesOf(stacks.base.json, 'AWS::Lambda::Function');
    // The four task functions, the console, the callbacks function, the requestState key's custom resource, and
    // deploy_release's workflow receiver and events consumer.
    assert.equal(fns.length, 9);
    // Tracing is a setting, off by default; on, the task's one OpenTelemetry trace replaces Lambda's per-invocation one (docs/tracing.md).
    for (const [id, fn] of resourcesOf(stacks.jwt.json, 'AWS::Lambda::Function'))
      assert.equal(fn['Properties']['TracingConfig'], undefined, id);
    for (const [id, fn] of fns) {
      const props = fn['Properties'];
      assert.equal(props['Runtime'], LAMBDA_RUNTIME.name, id);
      assert.deepEqual(props['Architectures'], ['arm64'], id);
      assert.equal(props['TracingConfig'], undefined, id);
      assert.equal(props['Handler'], 'index.handler', id);
      const logGroupId = props['LoggingConfig']['LogGroup']['Ref'] as string;
      const logGroup = stacks.base.json['Resources'][logGroupId];
      assert.equal(logGroup['Type'], 'AWS::Logs::LogGroup', id);
      assert.equal(logGroup['Properties']['RetentionInDays'], CONTEXT.logRetentionDays.default, id);
    }
  });

  it("get environment variables named by ENV, pointing at this stack's table and queue, with the same timings", () => {
    const allowed = new Set<string>([...Object.values(ENV), 'NODE_OPTIONS']);
    const [tableId] = only(stacks.base.json, 'AWS::DynamoDB::Table');
    const {
      queue: [queueId],
    } = queues(stacks.base.json);
    for (const [id, fn] of Object.values(functions(stacks.base.json))) {
      const variables = fn['Properties']['Environment']['Variables'] as Json;
      for (const name of Object.keys(variables)) assert.ok(allowed.has(name), `${id}: ${name} is not an ENV constant`);
      assert.deepEqual(variables[ENV.tableName], refTo(tableId), id);
      assert.deepEqual(variables[ENV.queueUrl], refTo(queueId), id);
      // Which tools a function serves is its bundle's (the generated entry), not a setting.
      assert.equal(variables[ENV.toolset], undefined, id);
    }
    // Every function that writes a task applies the store's policy (sweepAt = lease end or resume + grace).
    const timings = Object.values(functions(stacks.base.json)).map(([, fn]) => {
      const variables = fn['Properties']['Environment']['Variables'] as Json;
      return [variables[ENV.leaseMs], variables[ENV.sweepGraceMs], variables[ENV.invocationBudgetMs]];
    });
    for (const each of timings) assert.deepEqual(each, timings[0]);
    // The worker's redelivery delay is the queue's visibility timeout, so the sweeper never pre-empts SQS after an error.
    const [, worker] = functions(stacks.base.json).worker;
    const visibilityMs = (queues(stacks.base.json).queue[1]['Properties']['VisibilityTimeout'] as number) * 1000;
    assert.equal(Number(worker['Properties']['Environment']['Variables'][ENV.redeliveryMs]), visibilityMs);
  });

  it('fit the MCP function between the synchronous budget and the HTTP API limit', () => {
    const [, mcp] = functions(stacks.base.json).mcp;
    const timeoutMs = (mcp['Properties']['Timeout'] as number) * 1000;
    assert.ok(timeoutMs > DEFAULT_SETTINGS.syncBudgetMs && timeoutMs < 30_000, `${timeoutMs} ms`);
  });
});

describe('IAM', () => {
  /** Whether a policy is attached to a state machine's role (only Step Functions may assume it). */
  const isMachineRole = (policy: Json) =>
    (policy['Properties']['Roles'] as Json[]).every((role) => {
      const trust = stacks.base.json['Resources'][role['Ref']]['Properties']['AssumeRolePolicyDocument'] as Json;
      return JSON.stringify(trust['Statement']).includes('states.amazonaws.com');
    });

  it('scopes every statement to this stack\'s resources; only X-Ray and log delivery get "*"', () => {
    const policies = resourcesOf(stacks.base.json, 'AWS::IAM::Policy');
    assert.ok(policies.length >= 3);
    for (const [id, policy] of policies) {
      for (const statement of policy['Properties']['PolicyDocument']['Statement'] as Json[]) {
        const actions = asList<string>(statement['Action']);
        assert.ok(!actions.some((action) => action.includes('*')), `${id}: wildcard action in ${JSON.stringify(actions)}`);
        const resources = asList<unknown>(statement['Resource']);
        if (resources.includes('*') && actions.every((action) => action.startsWith('logs:'))) {
          // A state machine logging to CloudWatch Logs: the log delivery actions accept only "*".
          assert.ok(isMachineRole(policy), `${id}: "*" resource for ${actions}`);
          assert.ok(
            actions.every((action) => /^logs:(\w+LogDeliver(y|ies)|Describe\w+|PutResourcePolicy)$/.test(action)),
            `${id}: ${actions}`,
          );
        } else if (resources.includes('*')) {
          assert.deepEqual(
            [...actions].sort(),
            ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
            `${id}: "*" resource for ${actions}`,
          );
        }
        // Anything else references a resource of this stack (Ref/GetAtt), never a hand-written ARN.
        for (const resource of resources)
          assert.ok(resource === '*' || typeof resource !== 'string', `${id}: literal resource ${String(resource)}`);
      }
    }
  });

  it('uses no managed policies', () => {
    for (const [id, role] of resourcesOf(stacks.base.json, 'AWS::IAM::Role'))
      assert.equal(role['Properties']['ManagedPolicyArns'], undefined, id);
  });

  it('grants table access on the table and its indexes only, to the MCP function, the worker and the DLQ handler', () => {
    const [tableId] = only(stacks.base.json, 'AWS::DynamoDB::Table');
    const { mcp, worker, deadLetter } = functions(stacks.base.json);
    for (const [id, fn] of [mcp, worker, deadLetter]) {
      const dynamo = statementsOf(stacks.base.json, roleLogicalIdOf(fn)).filter((s) =>
        asList<string>(s['Action']).some((a) => a.startsWith('dynamodb:')),
      );
      assert.equal(dynamo.length, 1, id);
      assert.deepEqual(dynamo[0]!['Resource'], [arnOf(tableId), { 'Fn::Join': ['', [arnOf(tableId), '/index/*']] }], id);
      assert.ok(asList<string>(dynamo[0]!['Action']).includes('dynamodb:UpdateItem'), id);
    }
  });

  it('lets the MCP function, the worker and the sweeper send to the task queue, and each consumer receive from its own queue only', () => {
    const fns = functions(stacks.base.json);
    const {
      queue: [queueId],
      deadLetter: [deadLetterId],
    } = queues(stacks.base.json);
    const sqs = (fn: Json) =>
      statementsOf(stacks.base.json, roleLogicalIdOf(fn)).filter((s) => asList<string>(s['Action']).some((a) => a.startsWith('sqs:')));
    const actions = (statements: Json[]) => statements.flatMap((s) => asList<string>(s['Action']));

    // Every SQS statement names one of this stack's queues.
    for (const [, fn] of Object.values(fns)) {
      for (const statement of sqs(fn))
        assert.ok([queueId, deadLetterId].some((id) => JSON.stringify(statement['Resource']) === JSON.stringify(arnOf(id))));
    }

    const mcp = sqs(fns.mcp[1]);
    assert.deepEqual(
      mcp.map((s) => s['Resource']),
      [arnOf(queueId)],
    );
    assert.ok(actions(mcp).includes('sqs:SendMessage'));
    assert.ok(!actions(mcp).includes('sqs:ReceiveMessage'));

    // The worker consumes the task queue and hands tasks over to it.
    const worker = sqs(fns.worker[1]);
    assert.ok(worker.every((s) => JSON.stringify(s['Resource']) === JSON.stringify(arnOf(queueId))));
    assert.ok(actions(worker).includes('sqs:ReceiveMessage') && actions(worker).includes('sqs:SendMessage'));

    // The dead-letter handler only consumes the DLQ.
    const deadLetter = sqs(fns.deadLetter[1]);
    assert.deepEqual(
      deadLetter.map((s) => s['Resource']),
      [arnOf(deadLetterId)],
    );
    assert.ok(actions(deadLetter).includes('sqs:ReceiveMessage'));
    assert.ok(!actions(deadLetter).includes('sqs:SendMessage'));
  });
});

describe('api', () => {
  it('routes POST /mcp to the MCP function on a throttled, access-logged $default stage', () => {
    const [, route] = only(stacks.base.json, 'AWS::ApiGatewayV2::Route', isMcpRoute);
    assert.equal(route['Properties']['RouteKey'], 'POST /mcp');
    const [integrationId, integration] = only(
      stacks.base.json,
      'AWS::ApiGatewayV2::Integration',
      (i) => JSON.stringify(i['Properties']['IntegrationUri']) === JSON.stringify(arnOf(functions(stacks.base.json).mcp[0])),
    );
    assert.equal(integration['Properties']['IntegrationType'], 'AWS_PROXY');
    assert.ok(JSON.stringify(route['Properties']['Target']).includes(integrationId), 'the route targets it');

    const [, stage] = only(stacks.base.json, 'AWS::ApiGatewayV2::Stage');
    assert.equal(stage['Properties']['StageName'], '$default');
    assert.deepEqual(stage['Properties']['DefaultRouteSettings'], {
      // Sized from the worker concurrency: 10 batches of 5 one-second tasks, 11 requests each.
      ThrottlingRateLimit: 550,
      ThrottlingBurstLimit: 1100,
    });
    const destination = stage['Properties']['AccessLogSettings']['DestinationArn'];
    const logGroup = stacks.base.json['Resources'][destination['Fn::GetAtt'][0]];
    assert.equal(logGroup['Type'], 'AWS::Logs::LogGroup');
    assert.ok(logGroup['Properties']['RetentionInDays'] > 0);
    const format = JSON.parse(stage['Properties']['AccessLogSettings']['Format']) as Json;
    assert.ok(format['requestId'] && format['status']);
  });

  it('is open without JWT context, and says so in its outputs and in a synth warning', () => {
    assert.equal(resourcesOf(stacks.base.json, 'AWS::ApiGatewayV2::Authorizer').length, 0);
    const [, route] = only(stacks.base.json, 'AWS::ApiGatewayV2::Route', isMcpRoute);
    assert.ok(route['Properties']['AuthorizationType'] === undefined || route['Properties']['AuthorizationType'] === 'NONE');
    const outputs = Object.values(stacks.base.json['Outputs'] as Record<string, Json>);
    assert.ok(
      outputs.some((output) => String(output['Value']).startsWith('OPEN')),
      'an output says the endpoint is OPEN',
    );
    assert.ok(
      warnings(stacks.base).some((w) => w.includes(OPEN_ENDPOINT_WARNING)),
      'synth warns that the endpoint is open',
    );
  });

  it('requires a JWT from the configured issuer and audience when given', () => {
    const [authorizerId, authorizer] = only(stacks.jwt.json, 'AWS::ApiGatewayV2::Authorizer');
    assert.equal(authorizer['Properties']['AuthorizerType'], 'JWT');
    assert.deepEqual(authorizer['Properties']['JwtConfiguration'], {
      Issuer: 'https://issuer.example.com/',
      Audience: ['mcp-tasks', 'other-client'],
    });
    assert.deepEqual(authorizer['Properties']['IdentitySource'], ['$request.header.Authorization']);
    const [, route] = only(stacks.jwt.json, 'AWS::ApiGatewayV2::Route', isMcpRoute);
    assert.equal(route['Properties']['AuthorizationType'], 'JWT');
    assert.deepEqual(route['Properties']['AuthorizerId'], refTo(authorizerId));
    assert.ok(!warnings(stacks.jwt).some((w) => w.includes(OPEN_ENDPOINT_WARNING)));
    const outputs = Object.values(stacks.jwt.json['Outputs'] as Record<string, Json>);
    assert.ok(!outputs.some((output) => String(output['Value']).startsWith('OPEN')));
  });

  it('outputs the endpoint URL', () => {
    const outputs = Object.values(stacks.base.json['Outputs'] as Record<string, Json>);
    assert.ok(outputs.some((output) => JSON.stringify(output['Value']).includes('/mcp')));
  });
});
