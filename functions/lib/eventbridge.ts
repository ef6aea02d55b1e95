import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { Config } from '../../shared/config.ts';
import { EventBridgePublisher } from '../../shared/events/eventbridge.ts';

/**
 * The lifecycle events' publisher on the configured bus, or `undefined` when
 * the function has none (`-c events=off`): it then publishes nothing and
 * makes no call. Without a client, one is created that tries each request
 * once, with short timeouts: `LifecycleEvents` retries a bounded number of
 * times itself, and a publish waits after the task's state write, inside the
 * caller's invocation (an MCP request answers after it).
 */
export function eventBridgePublisher(
  config: Config,
  client: EventBridgeClient = new EventBridgeClient({
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000 },
  }),
): EventBridgePublisher | undefined {
  return config.eventBusName === undefined ? undefined : new EventBridgePublisher({ client, busName: config.eventBusName });
}
