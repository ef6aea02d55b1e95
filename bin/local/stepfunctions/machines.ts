/** The state machines of this life of the emulator: `CreateStateMachine`, `DescribeStateMachine`, and the look-up executions use. */
import { ApiError } from './api-errors.ts';
import { checkName, machineNameOf, type Place, stateMachineArn } from './arns.ts';
import { type PreparedDefinition, parseDefinition, prepareDefinition } from './definition.ts';
import { validateDefinition } from './interpreter.ts';

export type MachineType = 'STANDARD' | 'EXPRESS';

/** A state machine as created. */
export interface Machine {
  arn: string;
  name: string;
  type: MachineType;
  /** The definition as given (JSON text), which `DescribeStateMachine` answers. */
  definition: string;
  roleArn: string;
  /** Epoch milliseconds. */
  creationDate: number;
  prepared: PreparedDefinition;
}

export interface CreateMachineRequest {
  name: string;
  definition: string;
  roleArn: string;
  type: string | undefined;
}

export class Machines {
  readonly #place: Place;
  readonly #byArn = new Map<string, Machine>();

  constructor(place: Place) {
    this.#place = place;
  }

  /**
   * Creates a machine, or answers the existing one for the same name,
   * definition, role and type (AWS's idempotent create); another machine
   * under that name is `StateMachineAlreadyExists`.
   */
  create(request: CreateMachineRequest): Machine {
    const name = checkName(request.name, 'state machine');
    const type = request.type ?? 'STANDARD';
    if (type !== 'STANDARD' && type !== 'EXPRESS') {
      throw new ApiError(
        'ValidationException',
        `1 validation error detected: Value '${type}' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]`,
      );
    }
    const arn = stateMachineArn(this.#place, name);
    const existing = this.#byArn.get(arn);
    if (existing !== undefined) {
      if (existing.definition === request.definition && existing.roleArn === request.roleArn && existing.type === type) return existing;
      throw new ApiError('StateMachineAlreadyExists', `State Machine Already Exists: '${arn}'`);
    }
    const parsed = parseDefinition(request.definition);
    validateDefinition(parsed);
    const machine: Machine = {
      arn,
      name,
      type,
      definition: request.definition,
      roleArn: request.roleArn,
      creationDate: Date.now(),
      prepared: prepareDefinition(parsed),
    };
    this.#byArn.set(arn, machine);
    return machine;
  }

  /** The machine of `arn`, or `StateMachineDoesNotExist` (`InvalidArn` for an ARN that is not a state machine's). */
  get(arn: string): Machine {
    machineNameOf(this.#place, arn);
    const machine = this.#byArn.get(arn);
    if (machine === undefined) throw new ApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
    return machine;
  }
}
