/**
 * The names an engine's executions take, for every engine: an execution is
 * named after its task (the task id), so a retried start finds the one it
 * started and never starts a second; its input is the task's arguments as
 * canonical JSON, so a retry sends identical input. The local stack's
 * start-up recovery restarts an execution its emulator lost under a name
 * derived from the task id (`<taskId>--restart-<n>`); deployed, an execution
 * is never restarted.
 *
 * No AWS SDK and no wing in here: this module is part of the port.
 */
import { canonicalJson } from '../canonical-json.ts';

const RESTART = '--restart-';

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
