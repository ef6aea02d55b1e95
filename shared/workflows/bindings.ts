/**
 * The workflow bindings of a deployment: which Standard state machine each
 * workflow tool starts (`TASKS_WORKFLOWS`, a JSON object of tool name →
 * state machine ARN). The stack sets it from the machines it creates or
 * imports; the local stack from the machines it creates in its emulator.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */

import { executionArnOf, isMachineArn } from '../engines/stepfunctions/index.ts';
import type { ExpectedExecution } from '../tasks/workflows-model.ts';

/** Tool name → the ARN of the state machine it starts. */
export type WorkflowBindings = Readonly<Record<string, string>>;

/** Reads the bindings' JSON (`variable` names the setting in errors); unset or empty: none. */
export function parseWorkflowBindings(raw: string | undefined, variable: string): WorkflowBindings {
  if (raw === undefined || raw.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error(`${variable} must be a JSON object of tool name to state machine ARN`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`${variable} must be a JSON object of tool name to state machine ARN`);
  }
  for (const [tool, arn] of Object.entries(value)) {
    if (typeof arn !== 'string' || !isMachineArn(arn)) {
      throw new Error(
        `${variable}: the binding of "${tool}" must be a state machine ARN (arn:aws:states:<region>:<account>:stateMachine:<name>)`,
      );
    }
  }
  return value as WorkflowBindings;
}

/** The execution a task of `tool` starts (named after the task), or `undefined` when the tool is bound to none. */
export function expectedExecution(bindings: WorkflowBindings, tool: string, taskId: string): string | undefined {
  const machine = Object.hasOwn(bindings, tool) ? bindings[tool] : undefined;
  return machine === undefined ? undefined : executionArnOf(machine, taskId);
}

/** {@link expectedExecution} for any task, as the store's workflow operations take it. */
export function expectedBy(bindings: WorkflowBindings): ExpectedExecution {
  return (task) => expectedExecution(bindings, task.tool, task.taskId);
}
