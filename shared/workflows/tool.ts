/**
 * Workflow tools: a Step Functions state machine run as one task. The tool
 * is declared like any other (`defineWorkflowTool` in `#tool`: name, schema, the
 * workflow's ASL file, how its output reads); the engine supplies its
 * handler (`bindWorkflows`, at each function's composition root), which:
 *
 * 1. starts the execution in a step, named after the task with the arguments
 *    as canonical JSON, so a retry finds it (an open one is returned as it
 *    is; `ExecutionAlreadyExists` means it has closed: one `DescribeExecution`,
 *    and an ended one settles the task as its event would), and records on
 *    the row the execution the task follows;
 * 2. suspends with no compute (lease dropped, nothing queued) on the
 *    execution's end, recorded by the workflow-events function as the
 *    completion of the task's `workflow` callback; the sweeper wakes it
 *    15 minutes after the start, then at doubling gaps up to a day
 *    (`schedule.ts`), for one `DescribeExecution` should the event be lost;
 * 3. asks each question a task-token state sent (recorded on the row by the
 *    receiver) with `ctx.elicit`, one at a time in the order they came, and
 *    sends the answer back in a step (`replies.ts`);
 * 4. on a cancel, stops the execution (`StopExecution` naming the cancel)
 *    before the task ends `cancelled`.
 *
 * Replay: the start and each answer sent back are steps; the wait, the
 * questions' order and the looks are derived from the row, so a replay
 * reaches the same calls in the same order. The stop replays nothing (the
 * task ends with it) and is harmless when made again.
 */
import type { CallbackKeys } from '../callback-tokens.ts';
import { workflowInput } from '../engines/names.ts';
import { type EngineAdapter, type EngineName, ExecutionAlreadyExistsError, engineNamed, TaskTokenGoneError } from '../engines/port.ts';
import { END_STATUSES, endOf, executionArnOf } from '../engines/stepfunctions/index.ts';
import type { Log } from '../log.ts';
import { type CallbackHost, runHostOf } from '../runtime/callbacks.ts';
import { type ElicitAnswer, type TaskContext, type ToolDefinition, ToolError, type ToolResult } from '../runtime/tool.ts';
import type { TaskStore } from '../tasks/store.ts';
import { WORKFLOW_END_ID, type WorkflowEnd, type WorkflowQuestion, workflowEnd, workflowQuestions } from '../tasks/workflows-model.ts';
import type { WorkflowBindings } from './bindings.ts';
import type { WorkflowDeclaration } from './declaration.ts';
import { CANCELLED_ERROR, resultOfEnd, type WorkflowNaming } from './outcome.ts';
import { elicitParamsOf, replyOf } from './replies.ts';
import { nextCheckAt } from './schedule.ts';
import { unsealTaskToken } from './tokens.ts';

/** A workflow's execution has no deadline of its own here: a Standard execution runs for at most a year. */
const LONGEST_EXECUTION_MS = 366 * 24 * 3_600_000;

/** What a workflow tool's engine-supplied handler runs on. */
export interface WorkflowDeps {
  engine: EngineAdapter;
  bindings: WorkflowBindings;
  store: Pick<TaskStore, 'followExecution' | 'dropWorkflowToken'>;
  keys: CallbackKeys;
  log: Log;
}

/**
 * A workflow engine and the runner that binds workflow tools to it, as the
 * entry of a worker that runs workflow tools hands them over
 * (`functions/lib/sfn.ts`).
 */
export interface WorkflowRuntime {
  engine: () => EngineAdapter;
  bind: typeof bindWorkflows;
}

/** What the start step records. */
interface Started {
  executionArn: string;
  startDate: number;
  /** The execution had ended already (a retried start found it closed). */
  ended?: WorkflowEnd;
}

/**
 * The catalogue with its workflow tools' handlers supplied: each runs its
 * bound machine on `deps` (any other tool is left as it is). `deps` absent:
 * as {@link unboundWorkflows}.
 */
export function bindWorkflows(
  tools: ReadonlyMap<string, ToolDefinition>,
  deps: WorkflowDeps | undefined,
): ReadonlyMap<string, ToolDefinition> {
  if (!deps) return unboundWorkflows(tools);
  return withWorkflowHandlers(tools, (name, workflow) => async (args, ctx) => new WorkflowRun(name, workflow, deps, ctx).run(args));
}

/**
 * The catalogue of a function bundled without a Step Functions client (or a
 * workflow engine's keys): a workflow tool's task ends with a tool error
 * saying so. Apart from `bindWorkflows`, so that such a bundle carries no
 * workflow runner.
 */
export function unboundWorkflows(tools: ReadonlyMap<string, ToolDefinition>): ReadonlyMap<string, ToolDefinition> {
  return withWorkflowHandlers(tools, (name) => async () => {
    throw new ToolError(`${name} runs a workflow, and this function was bundled without Step Functions`);
  });
}

/** The catalogue with each workflow tool's handler from `handlerOf`; any other tool is left as it is. */
function withWorkflowHandlers(
  tools: ReadonlyMap<string, ToolDefinition>,
  handlerOf: (name: string, workflow: WorkflowDeclaration) => (args: Record<string, unknown>, ctx: TaskContext) => Promise<ToolResult>,
): ReadonlyMap<string, ToolDefinition> {
  return new Map(
    [...tools].map(([name, tool]) => {
      const workflow = tool.workflow;
      return workflow ? [name, { ...tool, handler: handlerOf(name, workflow) }] : [name, tool];
    }),
  );
}

/** One run of a workflow tool's handler (see the file's comment). */
class WorkflowRun {
  private readonly host: CallbackHost;
  private readonly taskId: string;
  private readonly naming: WorkflowNaming;
  private readonly engine: EngineName;

  constructor(
    private readonly tool: string,
    workflow: WorkflowDeclaration,
    private readonly deps: WorkflowDeps,
    private readonly ctx: TaskContext,
  ) {
    const host = runHostOf(ctx);
    if (!host?.taskId || !host.state) throw new ToolError(`${tool} runs a workflow: it runs only as a task`);
    this.host = host;
    this.taskId = host.taskId;
    this.naming = { workflow: workflow.name, ...(workflow.text ? { text: workflow.text } : {}) };
    this.engine = engineNamed(workflow);
  }

  async run(args: Record<string, unknown>): Promise<ToolResult> {
    const { host, ctx } = this;
    const state = host.state!;
    const machine = Object.hasOwn(this.deps.bindings, this.tool) ? this.deps.bindings[this.tool] : undefined;
    if (!machine) throw new ToolError(`No state machine is bound to ${this.tool} on this deployment (TASKS_WORKFLOWS)`);
    // A cancel stops the execution first: the one recorded, else the one the start names (a start whose record was lost).
    if (state.cancelling) return this.stop(state.workflow?.execution ?? executionArnOf(machine, this.taskId));
    const started = await ctx.step<Started>('workflow:start', () => this.start(machine, args));
    const execution = state.workflow?.execution ?? started.executionArn;
    if (ctx.signal.aborted) return this.stop(execution);
    // A start that found its execution ended settles the task, unless the task follows another since (a local restart).
    const end = (execution === started.executionArn ? started.ended : undefined) ?? workflowEnd(state.settlements);
    if (end) {
      const at = state.settlements[WORKFLOW_END_ID]?.at;
      if (at !== undefined) host.calledBack?.({ name: this.naming.workflow, since: started.startDate, until: at, workflow: true });
      return this.settle(end);
    }
    const refused = await this.answerQuestions();
    return this.lookOrWait(execution, started.startDate, refused);
  }

  /** Step 1 (in a step): start, or find the execution a retried start names. */
  private async start(machine: string, args: Record<string, unknown>): Promise<Started> {
    const { engine, store, log } = this.deps;
    let started: Started;
    try {
      started = await engine.start(machine, this.taskId, workflowInput(args));
    } catch (error) {
      if (!(error instanceof ExecutionAlreadyExistsError)) throw error;
      const described = await engine.describe(executionArnOf(machine, this.taskId));
      const ended = (END_STATUSES as readonly string[]).includes(described.status);
      started = {
        executionArn: described.executionArn,
        startDate: described.startDate,
        ...(ended ? { ended: endOf(described.executionArn, described.status as WorkflowEnd['status'], described) } : {}),
      };
    }
    await store.followExecution(this.taskId, started.executionArn, { engine: this.engine });
    log({ event: 'workflow-started', taskId: this.taskId, tool: this.tool, ...(started.ended ? { ended: started.ended.status } : {}) });
    return started;
  }

  /**
   * Step 3: each question in the order it came; an answer goes back once (a
   * step). Resolves to a refusal's status, if the last answer found the state
   * gone. A restart's questions replay as the row decided them: one withdrawn
   * unanswered is skipped (never asked again: its record went with it), one
   * withdrawn answered replays its answer and sends nothing, and one that
   * carries an earlier answer sends that answer, asking nobody.
   */
  private async answerQuestions(): Promise<string | undefined> {
    const { ctx, deps } = this;
    const tokens = this.host.state!.workflow?.tokens ?? {};
    const answers = new Map<string, ElicitAnswer>();
    let refused: string | undefined;
    for (const question of workflowQuestions(this.host.state!.settlements)) {
      if (question.withdrawn === 'unanswered') continue;
      const carried = question.carries === undefined ? undefined : answers.get(question.carries);
      const answer = carried ?? (await ctx.elicit(question.key, elicitParamsOf(question)));
      answers.set(question.key, answer);
      const sent = await ctx.step(`workflow:reply:${question.key}`, () =>
        question.withdrawn ? Promise.resolve({ delivered: false }) : this.reply(question, tokens[question.id], answer),
      );
      if (Object.hasOwn(tokens, question.id)) await deps.store.dropWorkflowToken(this.taskId, question.id);
      refused =
        sent.delivered || question.withdrawn
          ? undefined
          : `The workflow stopped waiting${question.state ? ` at ${question.state}` : ''} before the answer to "${question.key}" reached it`;
    }
    return refused;
  }

  private async reply(question: WorkflowQuestion & { id: string }, sealed: string | undefined, answer: Parameters<typeof replyOf>[1]) {
    const { engine, keys, log } = this.deps;
    const reply = replyOf(question, answer);
    let delivered = sealed !== undefined;
    if (sealed !== undefined) {
      const token = await unsealTaskToken(keys, this.taskId, sealed);
      try {
        await ('output' in reply ? engine.answer(token, reply.output) : engine.decline(token, reply.failure));
      } catch (error) {
        if (!(error instanceof TaskTokenGoneError)) throw error;
        delivered = false;
      }
    }
    log({
      event: 'workflow-answered',
      taskId: this.taskId,
      key: question.key,
      delivered,
      ...('failure' in reply ? { error: reply.failure.error } : {}),
    });
    return { delivered };
  }

  /** Step 2: a look at the execution when the sweeper woke the run for one, else the wait (until its end, a question, or the next look). */
  private async lookOrWait(execution: string, startDate: number, refused: string | undefined): Promise<ToolResult> {
    const { host } = this;
    const state = host.state!;
    const now = host.now();
    if (state.wait?.wakeAt !== undefined && state.wait.wakeAt <= now) {
      const described = await this.deps.engine.describe(execution);
      this.deps.log({ event: 'workflow-checked', taskId: this.taskId, status: described.status });
      if ((END_STATUSES as readonly string[]).includes(described.status)) {
        const end = endOf(execution, described.status as WorkflowEnd['status'], described);
        return resultOfEnd(described.output === undefined ? end : { ...end, output: JSON.parse(described.output) }, this.naming);
      }
    }
    const message = refused ?? state.workflow?.progress ?? `Running ${this.naming.workflow}`;
    const entry = { since: startDate, timeoutAt: startDate + LONGEST_EXECUTION_MS, onCancel: true as const };
    return host.wait(WORKFLOW_END_ID, entry, message, nextCheckAt(startDate, now));
  }

  /** The task's outcome for the execution's end (its output read with one `DescribeExecution` when the event left it out). */
  private async settle(end: WorkflowEnd): Promise<ToolResult> {
    if (end.status === 'SUCCEEDED' && end.outputOmitted) {
      const described = await this.deps.engine.describe(end.execution);
      return resultOfEnd({ ...end, output: described.output === undefined ? null : JSON.parse(described.output) }, this.naming);
    }
    return resultOfEnd(end, this.naming);
  }

  /**
   * Step 4: stop the execution, then end cancelled. Not a step: the run that
   * carries a cancel replays nothing (its task ends here), and a stop made
   * again by a retried run is harmless (an ended execution stays as it ended).
   */
  private async stop(execution: string): Promise<never> {
    const { host, deps } = this;
    // The cause says who ended it, by the cancel's own message when it has one (an operator's reason).
    const cause = host.state?.cancelMessage ?? `Cancelled by the caller of task ${this.taskId}`;
    await deps.engine.stop(execution, { error: CANCELLED_ERROR, cause });
    deps.log({ event: 'workflow-stopped', taskId: this.taskId });
    throw host.cancelReason();
  }
}
