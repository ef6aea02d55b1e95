/**
 * Workflow tools in the stack: each bound to a Standard state machine (the
 * repository's deploy_release created from its ASL file; in a project, one
 * built in CDK with `WorkflowStates` or one imported by ARN), the rule on the
 * default bus to the events consumer with a dead-letter queue and an alarm,
 * and least-privilege IAM: the worker alone calls Step Functions (it starts,
 * answers, describes and stops), the receiver and the consumer only write the
 * row and enqueue, each created machine invokes the receiver only. Synthesis
 * fails for a workflow tool without a binding, a binding without a tool, and
 * an Express machine. Without workflow tools there is none of it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Pass, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { machineNameOf } from '../../infra/constructs/workflows.ts';
import { McpTasks, type McpTasksProps } from '../../infra/mcp-tasks.ts';
import { ENV } from '../../shared/config.ts';
import {
  arnOf,
  asList,
  CDK_CONTEXT,
  defaultStack,
  functions,
  type Json,
  jwtStack,
  only,
  queues,
  ROOT,
  refTo,
  removeSynthesized,
  resourcesOf,
  roleLogicalIdOf,
  statementsOf,
  workflowFunctions,
} from './synth.ts';

const NEEDS_TOOLS = fileURLToPath(new URL('./needs-tools.ts', import.meta.url));
const ASL = JSON.parse(readFileSync(join(ROOT, 'functions/tools/workflows/deploy-release.asl.json'), 'utf8')) as Json;
const IMPORTED = 'arn:aws:states:eu-west-1:123456789012:stateMachine:releases';

const outdirs: string[] = [];
after(() => {
  removeSynthesized();
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

/** A project's stack serving the product's tools (deploy_release among them), with cdk-nag: its template and findings. */
function project(props: Partial<McpTasksProps>, toolsExport = 'product') {
  const outdir = mkdtempSync(join(tmpdir(), 'mcp-tasks-workflows-'));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'MyTools');
  const tasks = new McpTasks(stack, 'Tasks', { tools: { module: NEEDS_TOOLS, export: toolsExport }, projectRoot: ROOT, ...props });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const json = app.synth().getStackByName('MyTools').template as Json;
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: Array<{ pluginName: string; violations: Array<{ ruleName: string }> }>;
  };
  const findings = report.pluginReports.filter((r) => r.pluginName === 'AwsSolutions').flatMap((r) => r.violations.map((v) => v.ruleName));
  return { tasks, json, findings };
}

/** The Step Functions statements of a role's policies. */
const statesStatements = (json: Json, roleId: string) =>
  statementsOf(json, roleId).filter((s) => asList<string>(s['Action']).some((a) => a.startsWith('states:')));

const executionsOf = (machineName: string) => ({
  'Fn::Join': [
    '',
    ['arn:', { Ref: 'AWS::Partition' }, ':states:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:execution:${machineName}:*`],
  ],
});

describe("the repository's deployment: deploy_release on a machine created from its ASL file", () => {
  const json = () => defaultStack().json;

  it('creates one Standard machine from the file, the receiver substituted, logging every event without execution data', () => {
    const [, machine] = only(json(), 'AWS::StepFunctions::StateMachine');
    const props = machine['Properties'];
    assert.equal(props['StateMachineType'], 'STANDARD');
    assert.equal(props['StateMachineName'], 'McpTasks-deploy_release');
    assert.deepEqual(JSON.parse(props['DefinitionString']), ASL, 'the file, unchanged');
    assert.deepEqual(props['DefinitionSubstitutions'], { ReceiverFunctionArn: arnOf(workflowFunctions(json()).receiver[0]) });
    assert.equal(props['LoggingConfiguration']['Level'], 'ALL');
    assert.equal(props['LoggingConfiguration']['IncludeExecutionData'], false, 'no arguments, answers or task tokens in the logs');
  });

  it("sends the machine's ends on the default bus to the events consumer, with a dead-letter queue and an alarm on it", () => {
    const [ruleId, rule] = only(json(), 'AWS::Events::Rule', (r) => r['Properties']['EventPattern'] !== undefined);
    const props = rule['Properties'];
    assert.equal(props['EventBusName'], undefined, "the account's default bus, where Step Functions sends them");
    const [machineId] = only(json(), 'AWS::StepFunctions::StateMachine');
    assert.deepEqual(props['EventPattern'], {
      source: ['aws.states'],
      'detail-type': ['Step Functions Execution Status Change'],
      detail: {
        stateMachineArn: [
          {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':states:',
                { Ref: 'AWS::Region' },
                ':',
                { Ref: 'AWS::AccountId' },
                ':stateMachine:McpTasks-deploy_release',
              ],
            ],
          },
        ],
        status: ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'],
      },
    });
    // The pattern's ARN is the machine's (built from its name: the receiver's environment names it, and the machine the receiver).
    assert.equal(json()['Resources'][machineId]['Properties']['StateMachineName'], 'McpTasks-deploy_release');
    const [eventsId] = workflowFunctions(json()).events;
    const [target] = props['Targets'] as Json[];
    assert.deepEqual(target!['Arn'], arnOf(eventsId));
    const deadLetterId = target!['DeadLetterConfig']['Arn']['Fn::GetAtt'][0] as string;
    assert.notEqual(deadLetterId, queues(json()).deadLetter[0], 'a queue of its own, not the task DLQ');
    assert.equal(json()['Resources'][deadLetterId]['Properties']['SqsManagedSseEnabled'], true);
    assert.ok(target!['RetryPolicy']['MaximumRetryAttempts'] > 0);
    // EventBridge may invoke the consumer from this rule only.
    const [, permission] = only(
      json(),
      'AWS::Lambda::Permission',
      (p) => JSON.stringify(p['Properties']['FunctionName']) === JSON.stringify(arnOf(eventsId)),
    );
    assert.deepEqual(permission['Properties']['SourceArn'], arnOf(ruleId));
    const [, alarm] = only(
      json(),
      'AWS::CloudWatch::Alarm',
      (a) =>
        JSON.stringify(a['Properties']['Dimensions']) ===
        JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetterId, 'QueueName'] } }]),
    );
    assert.equal(alarm['Properties']['MetricName'], 'ApproximateNumberOfMessagesVisible');
    assert.equal(alarm['Properties']['Threshold'], 0);
    assert.equal(alarm['Properties']['ComparisonOperator'], 'GreaterThanThreshold');
  });

  it('lets the worker alone call Step Functions: start and answer on the machine, describe and stop on its executions', () => {
    const [machineId] = only(json(), 'AWS::StepFunctions::StateMachine');
    const { worker } = functions(json());
    assert.deepEqual(statesStatements(json(), roleLogicalIdOf(worker[1])), [
      {
        Action: ['states:SendTaskFailure', 'states:SendTaskSuccess', 'states:StartExecution'],
        Effect: 'Allow',
        Resource: refTo(machineId),
      },
      {
        Action: ['states:DescribeExecution', 'states:StopExecution'],
        Effect: 'Allow',
        Resource: executionsOf('McpTasks-deploy_release'),
      },
    ]);
    // No other role of the stack may call Step Functions (the receiver and the consumer write the row and enqueue).
    for (const [roleId] of resourcesOf(json(), 'AWS::IAM::Role')) {
      if (roleId === roleLogicalIdOf(worker[1])) continue;
      assert.deepEqual(statesStatements(json(), roleId), [], roleId);
    }
  });

  it('lets the receiver and the consumer read and update the row and enqueue, the receiver read the secret; nothing more', () => {
    const [tableId] = only(json(), 'AWS::DynamoDB::Table');
    const {
      queue: [queueId],
    } = queues(json());
    const { receiver, events } = workflowFunctions(json());
    for (const [id, fn] of [receiver, events]) {
      const statements = statementsOf(json(), roleLogicalIdOf(fn)).filter(
        (s) => !asList<string>(s['Action']).every((a) => a.startsWith('logs:') || a.startsWith('xray:')),
      );
      const byService = (prefix: string) => statements.filter((s) => asList<string>(s['Action']).some((a) => a.startsWith(prefix)));
      assert.deepEqual(
        byService('dynamodb:').map((s) => [s['Action'], s['Resource']]),
        [[['dynamodb:GetItem', 'dynamodb:UpdateItem'], arnOf(tableId)]],
        id,
      );
      assert.deepEqual(
        byService('sqs:').map((s) => s['Resource']),
        [arnOf(queueId)],
        id,
      );
      assert.ok(!byService('sqs:').some((s) => asList<string>(s['Action']).includes('sqs:ReceiveMessage')), id);
      const ssm = byService('ssm:');
      assert.equal(ssm.length, id === receiver[0] ? 1 : 0, `${id}: the stack's secret for the receiver only (it seals task tokens)`);
      assert.equal(statements.length, 2 + ssm.length, `${id}: ${JSON.stringify(statements)}`);
    }
  });

  it("lets each created machine invoke the receiver and nothing else (its role's only other grant: log delivery)", () => {
    const [, machine] = only(json(), 'AWS::StepFunctions::StateMachine');
    const roleId = machine['Properties']['RoleArn']['Fn::GetAtt'][0] as string;
    const [receiverId] = workflowFunctions(json()).receiver;
    const statements = statementsOf(json(), roleId);
    const invoke = statements.filter((s) => asList<string>(s['Action']).some((a) => a.startsWith('lambda:')));
    assert.deepEqual(invoke, [
      {
        Action: 'lambda:InvokeFunction',
        Effect: 'Allow',
        Resource: [arnOf(receiverId), { 'Fn::Join': ['', [arnOf(receiverId), ':*']] }],
      },
    ]);
    for (const statement of statements.filter((s) => s !== invoke[0]))
      assert.ok(
        asList<string>(statement['Action']).every((a) => a.startsWith('logs:')),
        JSON.stringify(statement),
      );
  });

  it('gives the bindings (TASKS_WORKFLOWS) to the functions that start, hear or follow the machines only', () => {
    const withBindings = [...Object.values(functions(json())), ...Object.values(workflowFunctions(json()))]
      .filter(([, fn]) => fn['Properties']['Environment']['Variables'][ENV.workflows] !== undefined)
      .map(([id]) => id)
      .sort();
    const { worker } = functions(json());
    const { receiver, events } = workflowFunctions(json());
    assert.deepEqual(withBindings, [worker[0], receiver[0], events[0]].sort());
    const bindings = worker[1]['Properties']['Environment']['Variables'][ENV.workflows] as Json;
    assert.match(JSON.stringify(bindings), /\{\\"deploy_release\\":\\"arn:.*:stateMachine:McpTasks-deploy_release\\"\}/);
  });

  it('has none of it where the tools declare no workflow (the conformance toolset)', () => {
    const { json: conformance } = jwtStack();
    assert.deepEqual(resourcesOf(conformance, 'AWS::StepFunctions::StateMachine'), []);
    assert.ok(!JSON.stringify(conformance).includes('states:'), 'no Step Functions grant');
    assert.ok(!JSON.stringify(conformance).includes(ENV.workflows), 'no bindings');
    assert.equal(resourcesOf(conformance, 'AWS::Events::Rule').length, 1, "the sweeper's schedule only");
  });
});

describe('a binding in a project', () => {
  it('imports a machine by ARN: no machine created, the grants on its ARN and its executions, the receiver in an output', () => {
    const { json, findings } = project({
      workflows: { deploy_release: { stateMachineArn: IMPORTED, stateMachineType: StateMachineType.STANDARD } },
    });
    assert.deepEqual(findings, []);
    assert.deepEqual(resourcesOf(json, 'AWS::StepFunctions::StateMachine'), []);
    const { worker } = functions(json);
    assert.deepEqual(statesStatements(json, roleLogicalIdOf(worker[1])), [
      { Action: ['states:SendTaskFailure', 'states:SendTaskSuccess', 'states:StartExecution'], Effect: 'Allow', Resource: IMPORTED },
      {
        Action: ['states:DescribeExecution', 'states:StopExecution'],
        Effect: 'Allow',
        Resource: 'arn:aws:states:eu-west-1:123456789012:execution:releases:*',
      },
    ]);
    const [, rule] = only(json, 'AWS::Events::Rule', (r) => r['Properties']['EventPattern'] !== undefined);
    assert.deepEqual(rule['Properties']['EventPattern']['detail']['stateMachineArn'], [IMPORTED]);
    assert.deepEqual(worker[1]['Properties']['Environment']['Variables'][ENV.workflows], JSON.stringify({ deploy_release: IMPORTED }));
    // Its states invoke the receiver: the machine's own role needs lambda:InvokeFunction on the ARN this output gives.
    const [receiverId] = workflowFunctions(json).receiver;
    assert.deepEqual(outputValue(json, 'WorkflowReceiverArn'), arnOf(receiverId));
  });

  it("builds a machine in CDK with WorkflowStates: the question's payload is the receiver's, its invoke the receiver only", () => {
    const { json, findings } = project({
      workflows: {
        deploy_release: {
          definition: (states, scope) =>
            states
              .progress('Starting', 'Starting the release')
              .next(
                states.question('Approval', {
                  key: 'approval',
                  message: 'Deploy?',
                  requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] },
                  answeredBy: 'person',
                  fourEyes: true,
                  resultPath: '$.approval',
                }),
              )
              .next(new Pass(scope, 'Done')),
        },
      },
    });
    assert.deepEqual(findings, []);
    const [, machine] = only(json, 'AWS::StepFunctions::StateMachine');
    const definition = JSON.parse(
      (machine['Properties']['DefinitionString']['Fn::Join'][1] as unknown[])
        .map((part) => (typeof part === 'string' ? part : 'ARN'))
        .join(''),
    ) as Json;
    const approval = definition['States']['Approval'] as Json;
    assert.match(JSON.stringify(approval['Resource']), /lambda:invoke\.waitForTaskToken/);
    assert.deepEqual(approval['Parameters']['Payload'], {
      'taskId.$': '$$.Execution.Name',
      'execution.$': '$$.Execution.Id',
      'state.$': '$$.State.Name',
      key: 'approval',
      message: 'Deploy?',
      requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] },
      answeredBy: 'person',
      fourEyes: true,
      'token.$': '$$.Task.Token',
    });
    assert.equal(approval['ResultPath'], '$.approval');
    const starting = definition['States']['Starting'] as Json;
    assert.equal(starting['Parameters']['InvocationType'], 'Event', 'progress is fire-and-forget');
    assert.equal(starting['Parameters']['Payload']['progress'], 'Starting the release');
    const roleId = machine['Properties']['RoleArn']['Fn::GetAtt'][0] as string;
    const [receiverId] = workflowFunctions(json).receiver;
    const lambda = statementsOf(json, roleId).filter((s) => asList<string>(s['Action']).some((a) => a.startsWith('lambda:')));
    assert.ok(lambda.length > 0);
    for (const statement of lambda) {
      assert.deepEqual(asList<string>(statement['Action']), ['lambda:InvokeFunction']);
      assert.ok(JSON.stringify(statement['Resource']).includes(receiverId) && !JSON.stringify(statement['Resource']).includes('"*"'));
    }
  });

  it('fails synthesis for a workflow tool without a binding, a binding without a tool, an Express machine and a bad ARN', () => {
    assert.throws(() => project({}), /the workflow tool "deploy_release" has no state machine: bind it in "workflows"/);
    assert.throws(
      () => project({ workflows: { deploy_release: {}, release_notes: {} } }),
      /"workflows" binds "release_notes", which is not a workflow tool of this deployment/,
    );
    assert.throws(
      () => project({ workflows: { deploy_release: {} } }, 'withoutWorkflows'),
      /binds "deploy_release", which is not a workflow tool/,
    );
    assert.throws(
      () => project({ workflows: { deploy_release: { stateMachineType: StateMachineType.EXPRESS } } }),
      /the machine of "deploy_release" must be Standard: an Express workflow sends no status-change events/,
    );
    assert.throws(
      () => project({ workflows: { deploy_release: { stateMachineArn: IMPORTED, stateMachineType: StateMachineType.EXPRESS } } }),
      /must be Standard/,
    );
    assert.throws(
      () => project({ workflows: { deploy_release: { stateMachineArn: 'releases', stateMachineType: StateMachineType.STANDARD } } }),
      /must be a state machine ARN, got "releases"/,
    );
    assert.throws(
      () => project({ workflows: { deploy_release: { definitionFile: 'package.json' } } }),
      /the workflow of "deploy_release" .*package\.json\) is not an ASL definition/,
    );
  });
});

describe("a created machine's name", () => {
  it("is the stack's and the tool's, within Step Functions' 80 characters, told apart when cut", () => {
    assert.equal(machineNameOf('McpTasks', 'deploy_release'), 'McpTasks-deploy_release');
    const stack = 'A'.repeat(70);
    const [first, second] = [machineNameOf(stack, 'deploy_release'), machineNameOf(stack, 'deploy_releases')];
    for (const name of [first!, second!]) assert.match(name, /^[\w-]{1,80}$/);
    assert.notEqual(first, second);
    assert.ok(first!.endsWith('-deploy_release'));
  });
});

/** An output's value by the end of its logical id (the construct prefixes its id). */
function outputValue(json: Json, suffix: string): unknown {
  const [, output] = Object.entries(json['Outputs'] as Record<string, Json>).find(([id]) => id.includes(suffix)) ?? [];
  return output?.['Value'];
}
