/**
 * The states a machine built in CDK uses to reach its task (a binding's
 * `definition`): a question (a task-token state on the receiver, with the
 * payload the receiver expects) and a progress message (a fire-and-forget
 * invoke of it). A machine written as an ASL file uses the same two states
 * by hand: docs/tools.md, "Wrapping a workflow".
 */
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { IntegrationPattern, JsonPath, TaskInput } from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvocationType, LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';

/** A question a task-token state asks on the task (as `ctx.elicit` would). */
export interface QuestionStateProps {
  /** The question's key (letters, digits, `_`, `.`, `-`), as `ctx.elicit`'s. */
  readonly key: string;
  /** What the person or client is asked: text, or a JSON path into the state's input (`JsonPath.format(…)`). */
  readonly message: string;
  /** The JSON Schema of the answer (`{ type: 'object', properties: … }`). */
  readonly requestedSchema: Record<string, unknown>;
  /**
   * `person`: only a person may answer (the console, approvers, four eyes).
   * @default anyone the task's questions reach
   */
  readonly answeredBy?: 'person';
  /**
   * Two different people must agree (a person question only).
   * @default `false`
   */
  readonly fourEyes?: boolean;
  /**
   * Where the answer goes in the state's output.
   * @default `$`: the answer replaces the input
   */
  readonly resultPath?: string;
}

/** The states of {@link QuestionStateProps} and progress, on the receiver, in one scope. */
export class WorkflowStates {
  readonly #scope: Construct | undefined;
  readonly #prefix: string;

  constructor(
    private readonly receiver: IFunction,
    scope?: Construct,
    prefix = '',
  ) {
    this.#scope = scope;
    this.#prefix = prefix;
  }

  /** The same states, their constructs in `scope` (ids prefixed). */
  in(scope: Construct, prefix: string): WorkflowStates {
    return new WorkflowStates(this.receiver, scope, prefix);
  }

  /**
   * A task-token state asking `props` on the task; it waits until the
   * question is decided. An accepted answer is its output; an approval turned
   * down fails it with `mcp-tasks.Rejected` (the comment as its cause), a
   * declined question with `mcp-tasks.Declined`: `addCatch` them.
   */
  question(id: string, props: QuestionStateProps): LambdaInvoke {
    return new LambdaInvoke(this.#in(), `${this.#prefix}${id}`, {
      stateName: id,
      lambdaFunction: this.receiver,
      integrationPattern: IntegrationPattern.WAIT_FOR_TASK_TOKEN,
      payload: TaskInput.fromObject({
        ...executionFields(),
        state: JsonPath.stringAt('$$.State.Name'),
        key: props.key,
        message: props.message,
        requestedSchema: props.requestedSchema,
        ...(props.answeredBy ? { answeredBy: props.answeredBy } : {}),
        ...(props.fourEyes ? { fourEyes: props.fourEyes } : {}),
        token: JsonPath.taskToken,
      }),
      ...(props.resultPath === undefined ? {} : { resultPath: props.resultPath }),
    });
  }

  /** A fire-and-forget state setting the task's status message (text, or `JsonPath.format(…)`); its output is its input. */
  progress(id: string, message: string): LambdaInvoke {
    return new LambdaInvoke(this.#in(), `${this.#prefix}${id}`, {
      stateName: id,
      lambdaFunction: this.receiver,
      invocationType: LambdaInvocationType.EVENT,
      payload: TaskInput.fromObject({
        ...executionFields(),
        progress: message,
      }),
      resultPath: JsonPath.DISCARD,
    });
  }

  #in(): Construct {
    if (!this.#scope) throw new Error('McpTasks: WorkflowStates are built inside a binding\'s "definition"');
    return this.#scope;
  }
}

/** What the receiver reads of the execution a state runs in: its task (the execution's name) and its ARN. */
function executionFields(): { taskId: string; execution: string } {
  return { taskId: JsonPath.stringAt('$$.Execution.Name'), execution: JsonPath.stringAt('$$.Execution.Id') };
}
