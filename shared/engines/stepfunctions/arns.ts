/**
 * The ARNs of Step Functions' state machines and executions. An execution is
 * named by the port's rule (`shared/engines/names.ts`: the task id, or its
 * local restart's name), so its ARN follows from its machine's.
 *
 * No AWS SDK in here: the MCP function reads execution ARNs with it.
 */

/** A Standard state machine's ARN: `arn:<partition>:states:<region>:<account>:stateMachine:<name>`. */
const MACHINE_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$/;

/** An execution's ARN: `arn:<partition>:states:<region>:<account>:execution:<machine>:<name>`. */
const EXECUTION_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:execution:[A-Za-z0-9_-]{1,80}:[A-Za-z0-9_-]{1,80}$/;

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
