/**
 * Workflow tools on Step Functions: each workflow tool bound to a Standard
 * state machine (created here from its ASL file or from states built in CDK,
 * or imported by ARN), the receiver its states invoke (questions and
 * progress), and the consumer of the machines' status-change events, the
 * target of a rule on the account's default bus (with a dead-letter queue,
 * alarmed by `Operations`). Only a deployment with workflow tools has any of it.
 *
 * Who calls Step Functions: the worker alone. It starts the execution
 * (`StartExecution` on the bound machines), sends answers back
 * (`SendTaskSuccess` / `SendTaskFailure` on them), and, woken by a cancel or
 * by the sweeper's look, stops or describes the execution
 * (`StopExecution` / `DescribeExecution` on the machines' executions). The
 * receiver and the consumer only write the task row and enqueue its resume.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { ArnFormat, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import {
  DefinitionBody,
  type IChainable,
  type IStateMachine,
  LogLevel,
  StateMachine,
  StateMachineType,
} from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ENV } from '../../shared/config.ts';
import { END_STATUSES } from '../../shared/engines/stepfunctions/index.ts';
import type { FunctionCode } from './function-code.ts';
import type { StackSecret } from './stack-secret.ts';
import { TaskFunction } from './task-function.ts';
import type { TaskQueue } from './task-queue.ts';
import type { TaskTable } from './task-table.ts';
import type { ToolSummary } from './tools-module.ts';
import { WorkflowStates } from './workflow-states.ts';

/** A state machine the construct creates for a workflow tool: from an ASL file, or from states built in CDK. */
export interface CreatedWorkflowBinding {
  /**
   * The ASL file, from the project root. `${ReceiverFunctionArn}` in it stands for the receiver of its questions and progress.
   * @default the file the tool declares (`workflow.definition`)
   */
  readonly definitionFile?: string;
  /**
   * The machine built in CDK instead of a file: `states` builds the question and progress states (`WorkflowStates`),
   * `scope` is where the other states go (`new Pass(scope, 'Done')`), one per machine.
   * @default none: the ASL file
   */
  readonly definition?: (states: WorkflowStates, scope: Construct) => IChainable;
  /**
   * Values for the file's other `${Name}` placeholders (CloudFormation's `DefinitionSubstitutions`).
   * @default none
   */
  readonly substitutions?: Readonly<Record<string, string>>;
  /**
   * Must be Standard: Express workflows send no status-change events, so a task would never hear its end.
   * @default `StateMachineType.STANDARD`
   */
  readonly stateMachineType?: StateMachineType;
  /**
   * The longest an execution may run (Step Functions ends it `TIMED_OUT`).
   * @default none: a Standard execution's year
   */
  readonly timeout?: Duration;
}

/** A state machine that exists already, imported by ARN. */
export interface ImportedWorkflowBinding {
  readonly stateMachineArn: string;
  /** What the machine is: it must be `StateMachineType.STANDARD` (an Express machine sends no status-change events). */
  readonly stateMachineType: StateMachineType;
}

/** The state machine a workflow tool starts: one created in the stack, or one imported by ARN. */
export type WorkflowBinding = CreatedWorkflowBinding | ImportedWorkflowBinding;

/** The statuses that end an execution: what the rule matches. */
const ENDS = [...END_STATUSES];

export interface WorkflowsProps {
  /** The deployment's tools, as synthesis read them. */
  readonly tools: readonly ToolSummary[];
  /** Tool name → its machine. */
  readonly bindings: Readonly<Record<string, WorkflowBinding>>;
  readonly code: FunctionCode;
  readonly table: TaskTable;
  readonly tasks: TaskQueue;
  readonly stackSecret: StackSecret;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  readonly tracing: boolean;
}

/** The bound machines, the receiver, the consumer and its rule (see the file's comment). */
export class Workflows extends Construct {
  /** Tool name → the machine it starts. */
  readonly machines: Readonly<Record<string, IStateMachine>>;
  /** The function the machines' states invoke: an imported machine's role needs `lambda:InvokeFunction` on it. */
  readonly receiver: TaskFunction;
  /** The consumer of the machines' status-change events. */
  readonly events: TaskFunction;
  /** Where status-change events go that the consumer could not take after EventBridge's retries. */
  readonly deadLetterQueue: Queue;
  /** `TASKS_WORKFLOWS`: for the functions that start, follow or hear the machines. */
  readonly environment: Record<string, string>;

  readonly #bindings: Readonly<Record<string, WorkflowBinding>>;

  constructor(scope: Construct, id: string, props: WorkflowsProps) {
    super(scope, id);
    this.#bindings = props.bindings;
    const workflowTools = checkBindings(props.tools, props.bindings);
    const arns = Object.fromEntries(workflowTools.map((tool) => [tool.name, this.#arnOf(tool.name, props.bindings[tool.name]!)]));
    this.environment = { [ENV.workflows]: Stack.of(this).toJsonString(arns) };
    const common = { code: props.code, logRetention: props.logRetention, removalPolicy: props.removalPolicy, tracing: props.tracing };
    const environment = { ...props.tasks.environment, ...this.environment };

    this.receiver = new TaskFunction(this, 'Receiver', {
      ...common,
      entry: 'workflowReceiver',
      description: "MCP tasks: a workflow's questions and progress, from its states, onto its task",
      memorySize: 256,
      timeout: Duration.seconds(10),
      environment: { ...environment, [ENV.stackSecretParameter]: props.stackSecret.parameterName },
    });
    // Task tokens are sealed under a key derived from the stack's secret.
    props.stackSecret.grantRead(this.receiver.role);
    this.receiver.function.node.addDependency(props.stackSecret.resource);

    this.events = new TaskFunction(this, 'Events', {
      ...common,
      entry: 'workflowEvents',
      description: "MCP tasks: a workflow's end (its status-change event) onto its task",
      memorySize: 256,
      timeout: Duration.seconds(10),
      environment,
    });
    for (const fn of [this.receiver, this.events]) {
      props.table.grantWorkflows(fn);
      props.tasks.queue.grantSendMessages(fn.function);
    }

    const states = new WorkflowStates(this.receiver.function);
    this.machines = Object.fromEntries(
      workflowTools.map((tool) => [tool.name, this.#machine(tool, props.bindings[tool.name]!, states, props, arns[tool.name]!)]),
    );
    this.deadLetterQueue = this.#rule(Object.values(arns));
  }

  /**
   * What the worker needs on the machines: start them, answer their task-token
   * states, and describe and stop their executions.
   */
  grantWorker(worker: TaskFunction): void {
    worker.function.addEnvironment(ENV.workflows, this.environment[ENV.workflows]!);
    for (const [tool, machine] of Object.entries(this.machines)) {
      machine.grantStartExecution(worker.role);
      machine.grant(worker.role, 'states:SendTaskSuccess', 'states:SendTaskFailure');
      // Its executions, named after their tasks: `execution:<machine name>:*`.
      const executions = this.#executionsOf(tool);
      worker.role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['states:DescribeExecution', 'states:StopExecution'], resources: [executions.arn] }),
      );
      Validations.of(worker.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${executions.finding}]`,
        reason:
          "The executions of one bound state machine: each is named after its task, so they are named by the machine's prefix " +
          '(execution:<machine>:*), the narrowest Step Functions allows for executions not started yet.',
      });
    }
  }

  /** The ARN pattern of a bound machine's executions, and how cdk-nag writes it. */
  #executionsOf(tool: string): { arn: string; finding: string } {
    const binding = this.#bindings[tool]!;
    if ('stateMachineArn' in binding) {
      const arn = `${binding.stateMachineArn.replace(':stateMachine:', ':execution:')}:*`;
      return { arn, finding: arn };
    }
    const name = machineNameOf(Stack.of(this).stackName, tool);
    const arn = Stack.of(this).formatArn({
      service: 'states',
      resource: 'execution',
      resourceName: `${name}:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    return { arn, finding: `arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${name}:*` };
  }

  /**
   * A bound machine's ARN. A created machine's is built from its name, not
   * referenced: the receiver's environment names the machines whose
   * definitions name the receiver, and a reference would be a cycle.
   */
  #arnOf(tool: string, binding: WorkflowBinding): string {
    if ('stateMachineArn' in binding) return binding.stateMachineArn;
    return Stack.of(this).formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: machineNameOf(Stack.of(this).stackName, tool),
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }

  #machine(tool: ToolSummary, binding: WorkflowBinding, states: WorkflowStates, props: WorkflowsProps, arn: string): IStateMachine {
    const id = `Machine${pascal(tool.name)}`;
    if ('stateMachineArn' in binding) return StateMachine.fromStateMachineArn(this, id, arn);
    const receiverArn = this.receiver.function.functionArn;
    const definitionBody = binding.definition
      ? DefinitionBody.fromChainable(this.#built(binding.definition, states, `${id}Definition`))
      : DefinitionBody.fromString(readDefinition(props.code.projectRoot, binding.definitionFile ?? tool.workflow!.definition, tool.name));
    const logGroup = new LogGroup(this, `${id}Logs`, { retention: props.logRetention, removalPolicy: props.removalPolicy });
    const machine = new StateMachine(this, id, {
      stateMachineName: machineNameOf(Stack.of(this).stackName, tool.name),
      stateMachineType: StateMachineType.STANDARD,
      comment: `MCP tasks: the workflow of the tool ${tool.name}`,
      definitionBody,
      ...(binding.definition ? {} : { definitionSubstitutions: { ...binding.substitutions, ReceiverFunctionArn: receiverArn } }),
      ...(binding.timeout ? { timeout: binding.timeout } : {}),
      // Every event, without execution data: no arguments, answers or task tokens in the logs.
      logs: { destination: logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: props.tracing,
      removalPolicy: props.removalPolicy,
    });
    // The receiver, and nothing else (a machine built in CDK grants its own invokes, the same one).
    if (!binding.definition) this.receiver.function.grantInvoke(machine.role);
    Validations.of(machine.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Logging to CloudWatch Logs needs the log delivery actions (logs:CreateLogDelivery, …), which accept only "*" (and, with ' +
        "tracing, X-Ray's). Its invoke permission is on the receiver alone (its ARN and versions).",
    });
    const stack = Stack.of(this);
    const receiverId = stack.resolve(stack.getLogicalId(this.receiver.function.node.defaultChild as CfnFunction)) as string;
    Validations.of(machine.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${receiverId}.Arn>:*]`,
      reason: "lambda:InvokeFunction on the receiver's versions and aliases (CDK's grantInvoke): the receiver alone.",
    });
    if (!props.tracing)
      Validations.of(machine).acknowledge({
        id: 'AwsSolutions-SF2',
        reason: 'X-Ray tracing follows the deployment\'s "tracing" setting (off by default for its cost: docs/deploying.md).',
      });
    return machine;
  }

  /** A machine built in CDK: its states in a scope of their own. */
  #built(definition: NonNullable<CreatedWorkflowBinding['definition']>, states: WorkflowStates, id: string): IChainable {
    const scope = new Construct(this, id);
    return definition(states.in(scope, ''), scope);
  }

  /** The rule on the default bus: the bound machines' ends, to the consumer; a DLQ for what it could not take. */
  #rule(machineArns: string[]): Queue {
    const deadLetterQueue = new Queue(this, 'EventsDeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is the dead-letter queue of the workflow-events rule's target (alarmed when it holds a message).",
    });
    new Rule(this, 'Ends', {
      description: "MCP tasks: the bound machines' executions ending, to the workflow-events function",
      // No bus given: the account's default bus, where Step Functions sends these.
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: { stateMachineArn: machineArns, status: ENDS },
      },
      targets: [new LambdaFunction(this.events.function, { deadLetterQueue, maxEventAge: Duration.hours(24), retryAttempts: 185 })],
    });
    return deadLetterQueue;
  }
}

/**
 * The workflow tools, each with its binding: synthesis fails for a workflow
 * tool without a binding, a binding without a workflow tool, and an Express machine.
 */
function checkBindings(tools: readonly ToolSummary[], bindings: Readonly<Record<string, WorkflowBinding>>): ToolSummary[] {
  const workflowTools = tools.filter((tool) => tool.workflow !== undefined);
  for (const tool of workflowTools) {
    if (!Object.hasOwn(bindings, tool.name))
      throw new Error(`McpTasks: the workflow tool "${tool.name}" has no state machine: bind it in "workflows"`);
  }
  for (const [name, binding] of Object.entries(bindings)) {
    if (!workflowTools.some((tool) => tool.name === name))
      throw new Error(`McpTasks: "workflows" binds "${name}", which is not a workflow tool of this deployment`);
    if ((binding.stateMachineType ?? StateMachineType.STANDARD) !== StateMachineType.STANDARD)
      throw new Error(`McpTasks: the machine of "${name}" must be Standard: an Express workflow sends no status-change events`);
    if ('stateMachineArn' in binding && !/^arn:[\w-]+:states:[\w-]+:\d{12}:stateMachine:[\w-]{1,80}$/.test(binding.stateMachineArn))
      throw new Error(`McpTasks: the machine of "${name}" must be a state machine ARN, got "${binding.stateMachineArn}"`);
  }
  return workflowTools;
}

/** An ASL file's text, checked to be a JSON object with states (a broken file fails synthesis, naming it). */
function readDefinition(projectRoot: string, file: string, tool: string): string {
  const path = isAbsolute(file) ? file : resolve(projectRoot, file);
  let text: string;
  let definition: unknown;
  try {
    text = readFileSync(path, 'utf8');
    definition = JSON.parse(text);
  } catch (error) {
    throw new Error(`McpTasks: the workflow of "${tool}" (${path}) is not a readable JSON file`, { cause: error });
  }
  if (typeof definition !== 'object' || definition === null || !('StartAt' in definition) || !('States' in definition))
    throw new Error(`McpTasks: the workflow of "${tool}" (${path}) is not an ASL definition (no StartAt and States)`);
  return text;
}

/**
 * A created machine's name: the stack's and the tool's (unique in the
 * account and region, as stack names are), within Step Functions' 80
 * characters (a long stack name is cut and told apart by a hash).
 */
export function machineNameOf(stackName: string, tool: string): string {
  const name = `${stackName}-${tool}`.replace(/[^\w-]/g, '-');
  if (name.length <= 80) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  const toolPart = tool.replace(/[^\w-]/g, '-').slice(0, 40);
  return `${stackName.replace(/[^\w-]/g, '-').slice(0, 80 - toolPart.length - hash.length - 2)}-${hash}-${toolPart}`;
}

/** `deploy_release` → `DeployRelease`, for construct ids. */
function pascal(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
