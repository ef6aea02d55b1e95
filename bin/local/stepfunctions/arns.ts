/** The ARNs and names of state machines and executions, built and checked as Step Functions does. */
import { ApiError } from './api-errors.ts';

/** Where the emulator pretends to be: the region and account its ARNs name. */
export interface Place {
  region: string;
  account: string;
}

/**
 * A name Step Functions accepts for a state machine or an execution: 1 to 80
 * characters, none of white space, brackets, wildcards, the special characters
 * `" # % \ ^ | ~ \` $ & , ; : /`, or control characters (U+0000-001F, U+007F-009F: `\p{Cc}`).
 */
const NAME = /^[^\s<>{}[\]?*"#%\\^|~`$&,;:/\p{Cc}]{1,80}$/u;

/** The name, or `InvalidName` as AWS answers a name it refuses. */
export function checkName(name: string, what: 'state machine' | 'execution'): string {
  if (!NAME.test(name)) throw new ApiError('InvalidName', `Invalid Name: '${name}' is not a valid ${what} name`);
  return name;
}

export function stateMachineArn(place: Place, name: string): string {
  return `arn:aws:states:${place.region}:${place.account}:stateMachine:${name}`;
}

/** A Standard execution's ARN: the machine's name and the execution's, which is why names are unique per machine. */
export function executionArn(place: Place, machineName: string, name: string): string {
  return `arn:aws:states:${place.region}:${place.account}:execution:${machineName}:${name}`;
}

/** An Express execution's ARN, which carries an id of its own besides the name. */
export function expressExecutionArn(place: Place, machineName: string, name: string, id: string): string {
  return `arn:aws:states:${place.region}:${place.account}:express:${machineName}:${name}:${id}`;
}

/** The machine's name in a state machine ARN of this place, or `InvalidArn`. */
export function machineNameOf(place: Place, arn: string): string {
  const prefix = stateMachineArn(place, '');
  const name = arn.startsWith(prefix) ? arn.slice(prefix.length) : '';
  if (!NAME.test(name)) throw new ApiError('InvalidArn', `Invalid Arn: 'Resource type not valid in this context: ${arn}'`);
  return name;
}

/** An execution ARN of this place (Standard or Express), or `InvalidArn`. */
export function checkExecutionArn(place: Place, arn: string): string {
  const parts = arn.split(':');
  const shaped = parts.length >= 8 && arn.startsWith(`arn:aws:states:${place.region}:${place.account}:`);
  if (!shaped || (parts[5] !== 'execution' && parts[5] !== 'express')) {
    throw new ApiError('InvalidArn', `Invalid Arn: 'Resource type not valid in this context: ${arn}'`);
  }
  return arn;
}
