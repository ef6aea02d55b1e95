/**
 * A Step Functions execution as one task (`deploy_release`: checks, one
 * approval, two regions) measured on the local stack like the other
 * scenarios, its Step Functions requests counted on the worker's client,
 * next to what an agent pays to follow the same execution through split
 * tools (start / describe / …, as AgentCore's Step Functions connector
 * exposes them), polling `DescribeExecution` every 30 s.
 *
 * The execution's length changes nothing here until the first look at
 * 15 minutes (`schedule.ts`): a 10-minute execution costs what the run
 * measures (its Waits are cut short locally), and a 7-day one adds at most
 * the looks `checksWithin` counts, one `DescribeExecution` each, should its
 * end event never come.
 */
import type { SFNClient } from '@aws-sdk/client-sfn';
import type { TaskRecord, TaskStatus } from '../../shared/tasks/model.ts';
import { checksWithin } from '../../shared/workflows/schedule.ts';
import { detail, figuresOf, type Meter, meter, resetMeter } from './aws-counting.ts';

const MINUTE = 60_000;
/** The split-tools agent's poll, and the execution it follows. */
const POLL_MS = 30_000;
const EXECUTION_MS = 10 * MINUTE;
const TARGET_RATIO = 0.1;

/** Counts each request of the workflow engine's client in the meter, as `StepFunctions.<command>`. */
export function meterStepFunctions(client: SFNClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName).replace(/Command$/, '');
      const key = `StepFunctions.${command}`;
      meter.commands.set(key, (meter.commands.get(key) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'benchStepFunctionsMeter' },
  );
}

/** Invocations of the receiver and the event consumer, from their log lines (each line is one invocation deployed). */
export const workflowInvocations = { receiver: 0, consumer: 0 };

/** Counts a log line of the receiver or the consumer (the consumer's RUNNING events are not delivered deployed: the rule matches ends). */
export function countWorkflowLine(line: string): void {
  if (line.includes('"event":"workflow-progress"') || line.includes('"event":"workflow-question"')) workflowInvocations.receiver += 1;
  if (line.includes('"event":"workflow-event"')) workflowInvocations.consumer += 1;
}

function stepFunctionsRequests(m: Meter, command?: string): number {
  return [...m.commands].filter(([key]) => key.startsWith(`StepFunctions.${command ?? ''}`)).reduce((sum, [, n]) => sum + n, 0);
}

/** Runs the scenario and prints it against the split tools' polling; sets a non-zero exit code past the target ratio. */
export async function workflowVersusPoll(bench: {
  statusOf(taskId: string, statuses: TaskStatus[]): Promise<TaskRecord>;
  quiescent(): Promise<true>;
  createTask(name: string, args: Record<string, unknown>): Promise<string>;
  answer(taskId: string, key: string, content: Record<string, unknown>): Promise<void>;
}): Promise<string[]> {
  const { statusOf, quiescent, createTask, answer } = bench;
  await quiescent();
  resetMeter();
  workflowInvocations.receiver = 0;
  workflowInvocations.consumer = 0;
  const regions = ['eu-west-1', 'us-east-1'];
  const taskId = await createTask('deploy_release', { release: 'bench@1.0.0', regions });
  await statusOf(taskId, ['input_required']);
  await answer(taskId, 'approval', { approve: true });
  const done = await statusOf(taskId, ['completed', 'failed', 'cancelled']);
  if (done.status !== 'completed' || done.result['isError'] === true)
    throw new Error(`bench: deploy_release ended ${JSON.stringify(done)}`);
  await quiescent();
  const figures = figuresOf(meter);
  const following = stepFunctionsRequests(meter, 'StartExecution') + stepFunctionsRequests(meter, 'DescribeExecution');
  const answers = stepFunctionsRequests(meter) - following;
  const polls = EXECUTION_MS / POLL_MS + 1;
  const split = { stepFunctions: 1 + polls, turns: 1 + polls };
  const ratio = following / split.stepFunctions;
  const turnRatio = 1 / split.turns;
  if (ratio > TARGET_RATIO || turnRatio > TARGET_RATIO) process.exitCode = 1;
  return [
    '',
    `A Step Functions execution as one task (deploy_release: checks, one approval, ${regions.length} regions), measured per task:`,
    `- ${figures.ddbRequests} DynamoDB requests (${figures.wcu} WCU, ${figures.rcu} RCU), ${figures.sqsRequests} SQS requests, ` +
      `${figures.invocations} worker invocations, ${workflowInvocations.receiver} receiver invocations (the question and ` +
      `${workflowInvocations.receiver - 1} progress messages), ${workflowInvocations.consumer} event-consumer invocation(s), ` +
      `${stepFunctionsRequests(meter)} Step Functions requests (${following} to start and follow the execution, ${answers} to answer ` +
      `its question); ${detail(meter)}`,
    `- the model: 1 tools/call, then the client polls tasks/get in the background (no model turn); no look at the execution ` +
      `before 15 minutes, so a ${EXECUTION_MS / MINUTE}-minute execution costs the same, and a 7-day one whose end event never came ` +
      `adds at most ${checksWithin(7 * 24 * 60 * MINUTE)} DescribeExecution (one per look)`,
    `- split tools polling DescribeExecution every ${POLL_MS / 1000} s for ${EXECUTION_MS / MINUTE} minutes: 1 StartExecution + ` +
      `${polls} DescribeExecution = ${split.stepFunctions} Step Functions requests and ${split.turns} model turns (each also a ` +
      'tools/call: an API request and an invocation of the MCP function), plus the same SendTaskSuccess for the approval',
    `- ratio: ${following}/${split.stepFunctions} = ${ratio.toFixed(3)}× the Step Functions requests to follow the execution, ` +
      `1/${split.turns} = ${turnRatio.toFixed(3)}× the model turns (target ≤ ${TARGET_RATIO}×${ratio > TARGET_RATIO || turnRatio > TARGET_RATIO ? ': OVER' : ''})`,
  ];
}
