import { CfnOutput, Stack } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Construct } from 'constructs';
import { ENV } from '../../shared/config.ts';
import { EVENT_SOURCE } from '../../shared/events/task-events.ts';
import { EVENT_OUTPUTS } from '../outputs.ts';
import type { TaskFunction } from './task-function.ts';

/**
 * The bus the task lifecycle events go to: one the stack creates, not the
 * account's default bus. A grant of `events:PutEvents` is on one bus, so a
 * grant on this one lets the functions write here only: on the default bus
 * they could put events next to other applications' (and AWS services'),
 * which that bus's rules already listen to. Its rules, archives and resource
 * policy are this deployment's, it goes with the stack, and it costs nothing
 * while idle (custom events are billed per event, on any bus).
 */
export class TaskEvents extends Construct {
  readonly bus: EventBus;
  /** `TASKS_EVENT_BUS` for the functions that publish. */
  readonly environment: Record<string, string>;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bus = new EventBus(this, 'Bus', { description: `MCP tasks: task lifecycle events (source ${EVENT_SOURCE})` });
    this.environment = { [ENV.eventBusName]: this.bus.eventBusName };
    // In the stack's scope, so that the outputs keep these names (a construct's scope would add a hash).
    const stack = Stack.of(this);
    new CfnOutput(stack, EVENT_OUTPUTS.busName, {
      value: this.bus.eventBusName,
      description: 'Event bus of the task lifecycle events: create rules on it (docs/operators.md, "Lifecycle events")',
    });
    new CfnOutput(stack, EVENT_OUTPUTS.busArn, {
      value: this.bus.eventBusArn,
      description: 'Event bus of the task lifecycle events (ARN)',
    });
  }

  /** `events:PutEvents` on this bus, nothing else: for a function that publishes. */
  grantPublish(fn: TaskFunction): void {
    this.bus.grantPutEventsTo(fn.role);
  }
}
