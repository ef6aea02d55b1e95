/**
 * The CDK stack as operated and checked: alarms and the optional dashboard,
 * cdk-nag's AwsSolutions pack and its acknowledgements, the context settings
 * refused before anything is built, and the requestState key and allowed
 * origins. Synthesis is shared with the other stack tests (synth.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { createApp } from '../../infra/app.ts';
import { FAILED_TASK_RATE_THRESHOLD } from '../../infra/constructs/operations.ts';
import { CONTEXT } from '../../infra/context.ts';
import { ENV } from '../../shared/config.ts';
import { LOG_EVENTS } from '../../shared/log-events.ts';
import { METRICS_NAMESPACE } from '../../shared/metrics.ts';
import {
  arnOf,
  asList,
  CDK_CONTEXT,
  functions,
  type Json,
  only,
  queues,
  refTo,
  resourcesOf,
  roleLogicalIdOf,
  statementsOf,
  synth,
  templateStacks,
} from './synth.ts';

const stacks = templateStacks();

describe('operations', () => {
  it("alarms' runbook texts name only log events the code writes (the table of log events)", () => {
    const descriptions = resourcesOf(stacks.base.json, 'AWS::CloudWatch::Alarm').map(([, alarm]) =>
      String(alarm['Properties']['AlarmDescription']),
    );
    const named = descriptions.flatMap((text) => [...text.matchAll(/"([a-z]+(?:-[a-z]+)+)"/g)].map((match) => match[1]!));
    assert.ok(named.length >= 2, `the runbooks name log events: ${named.join(', ')}`);
    const known = new Set<string>(Object.values(LOG_EVENTS));
    for (const event of named) assert.ok(known.has(event), `"${event}" is a log event`);
  });

  it('alarms on the DLQ, dead-lettered tasks, worker errors, sweeper errors, queue age and API 5xx', () => {
    const alarms = resourcesOf(stacks.base.json, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm['Properties'] as Json);
    // Six alarms of one metric each ($0.10 apiece at list price): the failed-task
    // rate and dead-lettered messages come from the task metrics and the DLQ's age;
    // a seventh with workflow tools (the workflow-events DLQ: workflows.test.ts).
    assert.equal(alarms.length, 7);
    for (const alarm of alarms) assert.equal(alarm['Metrics'], undefined, 'one metric per alarm');
    const metricsOf = (alarm: Json): Array<{ name: string; namespace: string }> =>
      alarm['Metrics']
        ? (alarm['Metrics'] as Json[])
            .filter((m) => m['MetricStat'])
            .map((m) => ({ name: m['MetricStat']['Metric']['MetricName'], namespace: m['MetricStat']['Metric']['Namespace'] }))
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
    const errorAlarms = resourcesOf(stacks.base.json, 'AWS::CloudWatch::Alarm').filter(
      ([, a]) => a['Properties']['MetricName'] === 'Errors',
    );
    const [sweeperId] = functions(stacks.base.json).sweeper;
    const sweeper = errorAlarms.filter(
      ([, a]) => JSON.stringify(a['Properties']['Dimensions']) === JSON.stringify([{ Name: 'FunctionName', Value: refTo(sweeperId) }]),
    );
    assert.equal(sweeper.length, 1);
    const props = sweeper[0]![1]['Properties'];
    assert.equal(props['Namespace'], 'AWS/Lambda');
    assert.equal(props['Statistic'], 'Sum');
    assert.equal(props['Threshold'], 1);
    assert.equal(props['ComparisonOperator'], 'GreaterThanOrEqualToThreshold');
    assert.equal(props['EvaluationPeriods'], 2);
    assert.equal(props['DatapointsToAlarm'], 2);
    assert.ok(props['Period'] >= 60 * CONTEXT.sweepIntervalMinutes.default);
  });

  it('watches the dead-letter queue, and the worker queue for age', () => {
    const {
      queue: [queueId],
      deadLetter: [deadLetterId],
    } = queues(stacks.base.json);
    const ageAlarm = resourcesOf(stacks.base.json, 'AWS::CloudWatch::Alarm').find(
      ([, a]) => a['Properties']['MetricName'] === 'ApproximateAgeOfOldestMessage' && a['Properties']['Threshold'] > 900,
    )!;
    assert.deepEqual(ageAlarm[1]['Properties']['Dimensions'], [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }]);
    const ageAlarms = resourcesOf(stacks.base.json, 'AWS::CloudWatch::Alarm').filter(
      ([, a]) => a['Properties']['MetricName'] === 'ApproximateAgeOfOldestMessage',
    );
    assert.equal(ageAlarms.length, 2);
    assert.ok(
      ageAlarms.some(
        ([, a]) =>
          JSON.stringify(a['Properties']['Dimensions']) ===
          JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetterId, 'QueueName'] } }]),
      ),
      'DLQ not drained',
    );
  });

  it('has a dashboard with task counts, queue depth and API latency', () => {
    // Optional ($3 a month): none by default, one with `dashboard: true`.
    assert.equal(resourcesOf(stacks.base.json, 'AWS::CloudWatch::Dashboard').length, 0);
    const [, dashboard] = only(stacks.jwt.json, 'AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboard['Properties']['DashboardBody']);
    for (const text of ['ApproximateNumberOfMessagesVisible', 'ApproximateAgeOfOldestMessage', 'Latency', '5xx']) {
      assert.ok(body.includes(text), `dashboard shows ${text}`);
    }
    // Task counts read the embedded metrics, not the logs.
    assert.deepEqual(dashboardQueries(dashboard), [], 'no Logs Insights queries');
    const metrics = dashboardMetrics(dashboard).filter((m) => m[0] === METRICS_NAMESPACE);
    assert.ok(
      metrics.some((m) => m[1] === 'TasksCreated'),
      'dashboard counts created tasks',
    );
    for (const status of ['completed', 'failed', 'cancelled']) {
      assert.ok(
        metrics.some((m) => m[1] === 'TasksEnded' && m[2] === 'status' && m[3] === status),
        `dashboard counts ${status} tasks`,
      );
    }
    for (const name of ['TaskFailed', 'TaskDuration', 'TimeQueued', 'TaskRetries', 'TasksDeadLettered'])
      assert.ok(
        metrics.some((m) => m[1] === name),
        `dashboard shows ${name}`,
      );
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
  return dashboardWidgets(dashboard)
    .filter((w) => w['type'] === 'log')
    .map((w) => String(w['properties']['query']));
}

/** The metrics of a dashboard's graphs, as CloudWatch's `[namespace, name, dimension, value, …, options]` arrays. */
function dashboardMetrics(dashboard: Json): unknown[][] {
  return dashboardWidgets(dashboard)
    .filter((w) => w['type'] === 'metric')
    .flatMap((w) => (w['properties']['metrics'] ?? []) as unknown[][]);
}

/** Every `Validations.of(x).acknowledge(...)` in the tree: path, rule id and reason. */
function acknowledgements(app: App): Array<{ path: string; id: string; reason: string }> {
  const found: Array<{ path: string; id: string; reason: string }> = [];
  const visit = (node: IConstruct) => {
    for (const entry of node.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>))
        found.push({ path: node.node.path, id: id.replace(/^annotation::/i, ''), reason });
    }
    for (const child of node.node.children) visit(child);
  };
  visit(app);
  return found;
}

describe('cdk-nag (AwsSolutions)', () => {
  for (const variant of ['default', 'jwt'] as const) {
    it(`reports no unacknowledged errors or warnings (${variant} stack)`, () => {
      const s = variant === 'default' ? stacks.base : stacks.jwt;
      const findings = s.report.pluginReports
        .filter((report) => report.pluginName === 'AwsSolutions')
        .flatMap((report) =>
          report.violations.map((v) => `${v.severity} ${v.ruleName} at ${v.violatingConstructs.map((c) => c.constructPath).join(', ')}`),
        );
      assert.deepEqual(findings, []);
    });
  }

  it('acknowledges only findings that exist, each with a reason', () => {
    // Run the pack with acknowledgements ignored to see the raw findings.
    const pack = new AwsSolutionsChecks();
    (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
    const raw = pack
      .validateScope(stacks.base.app)
      .violations.flatMap((v) => v.violatingResources.map((r) => ({ rule: v.ruleName, path: r.constructPath ?? '' })));
    const acks = acknowledgements(stacks.base.app).filter((ack) => ack.id.startsWith('AwsSolutions-'));
    assert.ok(acks.length > 0);
    for (const ack of acks) {
      assert.ok(ack.reason.length > 40, `${ack.id} at ${ack.path} needs a written reason`);
      assert.ok(
        raw.some((f) => f.rule === ack.id && (f.path === ack.path || f.path.startsWith(`${ack.path}/`))),
        `${ack.id} at ${ack.path} acknowledges nothing`,
      );
    }
    const summary = [...new Map(acks.map((ack) => [ack.id.replace(/<[^>]+>/, '<table>'), ack.reason])).entries()];
    console.log(`cdk-nag: ${raw.length} raw findings, all acknowledged (${acks.length} acknowledgements):`);
    for (const [id, reason] of summary) console.log(`  ${id}: ${reason}`);
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
    [
      'a sweep interval slower than SQS redelivery',
      { sweepIntervalMinutes: 25 },
      /sweepIntervalMinutes.*shorter than the visibility timeout/s,
    ],
    ['an input wait that is not whole days', { maxInputWaitDays: 1.5 }, /maxInputWaitDays/],
    ['an input wait over a year', { maxInputWaitDays: 400 }, /maxInputWaitDays.*at most 365/],
    ['a client fallback that is neither on nor off', { clientFallback: 'strict' }, /clientFallback.*on or off/],
    ['approvers that are neither groups nor scopes', { approvers: 'admins' }, /approvers.*group:<name> or scope:<name>/],
    ['approvers on an open endpoint (nobody signs in)', { approvers: 'group:release' }, /approvers.*needs people to sign in/],
    ['person questions neither form nor url', { personQuestions: 'link' }, /personQuestions.*url or form/],
    ['a machine rule neither none nor <claim>=<value>', { machineClaim: 'gty' }, /machineClaim.*none or <claim>=<value>/],
  ];
  it('turns the client fallback off on the MCP function only with clientFallback=off, and leaves the default alone without it', () => {
    const fallback = (json: Json) =>
      Object.fromEntries(
        Object.entries(functions(json)).map(([name, [, fn]]) => [name, fn['Properties']['Environment']['Variables'][ENV.clientFallback]]),
      );
    const none = { mcp: undefined, worker: undefined, deadLetter: undefined, sweeper: undefined, console: undefined, callbacks: undefined };
    assert.deepEqual(fallback(stacks.base.json), none);
    assert.deepEqual(fallback(synth({ clientFallback: 'off', 'aws:cdk:bundling-stacks': [] }).json), { ...none, mcp: 'off' });
  });
  it('sets the machine rule on the MCP function (where tasks are created) with machineClaim, and leaves the default alone without it', () => {
    const rule = (json: Json) =>
      Object.fromEntries(
        Object.entries(functions(json)).map(([name, [, fn]]) => [name, fn['Properties']['Environment']['Variables'][ENV.machineClaim]]),
      );
    const none = { mcp: undefined, worker: undefined, deadLetter: undefined, sweeper: undefined, console: undefined, callbacks: undefined };
    assert.deepEqual(rule(stacks.base.json), none);
    const auth0 = synth({ machineClaim: 'gty=client-credentials', 'aws:cdk:bundling-stacks': [] });
    assert.deepEqual(rule(auth0.json), { ...none, mcp: 'gty=client-credentials' });
  });
  it('sets the input-wait limit of every function from maxInputWaitDays, and leaves the default alone without it', () => {
    const waits = (json: Json) =>
      Object.values(functions(json)).map(([, fn]) => fn['Properties']['Environment']['Variables'][ENV.maxInputWaitMs]);
    assert.deepEqual(waits(stacks.base.json), [undefined, undefined, undefined, undefined, undefined, undefined]);
    const twoDays = synth({ maxInputWaitDays: 2, 'aws:cdk:bundling-stacks': [] });
    assert.deepEqual(waits(twoDays.json), Array(6).fill('172800000'));
  });
  it('sets the approvers and form-only person questions on every function, and leaves the defaults alone without them', () => {
    const of = (json: Json, env: string) =>
      Object.values(functions(json)).map(([, fn]) => fn['Properties']['Environment']['Variables'][env]);
    const count = Object.keys(functions(stacks.base.json)).length;
    assert.ok(count >= 6, `the stack's functions (${count})`);
    assert.deepEqual(of(stacks.base.json, ENV.approvers), Array(count).fill(undefined));
    assert.deepEqual(of(stacks.base.json, ENV.personQuestions), Array(count).fill(undefined));
    const set = synth({
      approvers: 'group:release,scope:tasks/approve',
      personQuestions: 'form',
      jwtIssuer: 'https://issuer.example.com/',
      jwtAudience: 'a',
      'aws:cdk:bundling-stacks': [],
    });
    assert.deepEqual(of(set.json, ENV.approvers), Array(count).fill('group:release,scope:tasks/approve'));
    assert.deepEqual(of(set.json, ENV.personQuestions), Array(count).fill('form'));
  });
  it('accepts the longest sweep interval the timings allow (24 minutes)', () => {
    assert.doesNotThrow(() => createApp({ context: { ...CDK_CONTEXT, sweepIntervalMinutes: 24, 'aws:cdk:bundling-stacks': [] } }));
  });
  for (const [what, context, message] of bad) {
    it(`rejects ${what} before building anything`, () => {
      assert.throws(() => createApp({ context: { ...CDK_CONTEXT, ...context, 'aws:cdk:bundling-stacks': [] } }), message);
    });
  }
});

// The stack's secret and the allowed origins.
describe("the stack's secret and allowed origins", () => {
  it("creates the stack's secret as an SSM SecureString through a custom resource, and lets the MCP function read only that parameter", () => {
    const [customId, custom] = only(stacks.base.json, 'Custom::RequestStateKey');
    // The names a deployed stack has: its resource's id, its parameter and the variable naming it stay, or an update would replace the secret.
    assert.match(customId, /^StateKey/);
    assert.equal(ENV.stackSecretParameter, 'TASKS_STATE_KEY_PARAMETER');
    const parameterName = custom['Properties']['ParameterName'];
    assert.match(JSON.stringify(parameterName), /request-state-key/);
    // The value is made by the function, never in the template.
    assert.doesNotMatch(JSON.stringify(stacks.base.json), /"Type":"SecureString"/);
    const [creatorId, creator] = only(stacks.base.json, 'AWS::Lambda::Function', (fn) =>
      String(fn['Properties']['Description']).includes("the stack's secret"),
    );
    assert.deepEqual(custom['Properties']['ServiceToken'], arnOf(creatorId));
    const creatorStatements = statementsOf(stacks.base.json, roleLogicalIdOf(creator));
    const write = creatorStatements.find((s) => asList(s['Action']).includes('ssm:PutParameter'));
    assert.ok(write, 'the creator may put the parameter');
    assert.deepEqual(asList(write['Action']).sort(), ['ssm:DeleteParameter', 'ssm:PutParameter']);
    assert.match(JSON.stringify(write['Resource']), /parameter\/.*request-state-key/);

    const [mcpId, mcp] = functions(stacks.base.json).mcp;
    assert.deepEqual(mcp['Properties']['Environment']['Variables'][ENV.stackSecretParameter], parameterName);
    const read = statementsOf(stacks.base.json, roleLogicalIdOf(mcp)).filter((s) =>
      asList(s['Action']).some((a: string) => a.startsWith('ssm:')),
    );
    assert.equal(read.length, 1);
    assert.deepEqual(asList(read[0]!['Action']), ['ssm:GetParameter']);
    assert.deepEqual(read[0]!['Resource'], write['Resource']);
    assert.ok(asList(mcp['DependsOn'] ?? []).includes(customId), `${mcpId} waits for the key`);
  });

  it('configures no CORS and no allowed origins by default', () => {
    const [, api] = only(stacks.base.json, 'AWS::ApiGatewayV2::Api');
    assert.equal(api['Properties']['CorsConfiguration'], undefined);
    assert.equal(functions(stacks.base.json).mcp[1]['Properties']['Environment']['Variables'][ENV.allowedOrigins], undefined);
  });

  it('drives CORS (preflight included) and the Origin check from one allowed-origins setting', () => {
    const origins = synth({ allowedOrigins: 'https://app.example.com,https://admin.example.com', 'aws:cdk:bundling-stacks': [] });
    const [, api] = only(origins.json, 'AWS::ApiGatewayV2::Api');
    const cors = api['Properties']['CorsConfiguration'];
    assert.deepEqual(cors['AllowOrigins'], ['https://app.example.com', 'https://admin.example.com']);
    assert.deepEqual(cors['AllowMethods'], ['POST']);
    for (const header of ['content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'authorization'])
      assert.ok(cors['AllowHeaders'].includes(header), header);
    assert.ok(!cors['AllowHeaders'].some((header: string) => header.startsWith('mcp-param-')), 'the product declares no header parameter');
    assert.equal(
      functions(origins.json).mcp[1]['Properties']['Environment']['Variables'][ENV.allowedOrigins],
      'https://app.example.com,https://admin.example.com',
    );
    assert.throws(
      () => createApp({ context: { ...CDK_CONTEXT, allowedOrigins: 'app.example.com', 'aws:cdk:bundling-stacks': [] } }),
      /allowedOrigins/,
    );
  });

  it("lets browsers send the Mcp-Param-* headers of the tools' x-mcp-header parameters", () => {
    const all = synth({ allowedOrigins: 'https://app.example.com', toolset: 'all', 'aws:cdk:bundling-stacks': [] });
    const [, api] = only(all.json, 'AWS::ApiGatewayV2::Api');
    const allowed = api['Properties']['CorsConfiguration']['AllowHeaders'] as string[];
    assert.ok(allowed.includes('mcp-param-region'), allowed.join(', '));
    assert.ok(allowed.includes('mcp-name'));
  });
});
