/**
 * Names and ARNs of a workflow tool's executions. An execution is named
 * after its task (the task id), so a retried start finds the one it started
 * and never starts a second; its input is the task's arguments as canonical
 * JSON, so a retry sends identical input. The local stack's start-up recovery
 * restarts an execution its emulator lost under a name derived from the task
 * id (`<taskId>--restart-<n>`); deployed, an execution is never restarted.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import { canonicalJson } from '../canonical-json.ts';

/** A Standard state machine's ARN: `arn:<partition>:states:<region>:<account>:stateMachine:<name>`. */
const MACHINE_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$/;

/** An execution's ARN: `arn:<partition>:states:<region>:<account>:execution:<machine>:<name>`. */
const EXECUTION_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:execution:[A-Za-z0-9_-]{1,80}:[A-Za-z0-9_-]{1,80}$/;

const RESTART = '--restart-';

/** Whether `arn` is a state machine's ARN. */
export function isMachineArn(arn: string): boolean {
  return MACHINE_ARN.test(arn);
}

/** Whether `arn` is an execution's ARN. */
export function isExecutionArn(arn: string): boolean {
  return EXECUTION_ARN.test(arn);
}

/** The ARN of execution `name` of the machine `machineArn` (as Step Functions forms it). */
export function executionArnOf(machineArn: string, name: string): string {
  return `${machineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/** The name of an execution, the last part of its ARN. */
export function executionNameOf(executionArn: string): string {
  return executionArn.slice(executionArn.lastIndexOf(':') + 1);
}

/** The name of the `restart`-th restart of task `taskId`'s execution (local recovery only). */
export function restartedName(taskId: string, restart: number): string {
  return `${taskId}${RESTART}${restart}`;
}

/** The task an execution name belongs to, and which restart it is (0: the first execution). */
export function taskOfExecution(name: string): { taskId: string; restart: number } {
  const at = name.lastIndexOf(RESTART);
  const restart = at < 0 ? Number.NaN : Number(name.slice(at + RESTART.length));
  return Number.isInteger(restart) && restart > 0 ? { taskId: name.slice(0, at), restart } : { taskId: name, restart: 0 };
}

/** The execution input of a task: its arguments unchanged, as canonical JSON (identical for every retry of the start). */
export function workflowInput(args: Record<string, unknown>): string {
  return canonicalJson(args);
}
