/**
 * What the functions are composed of. Each Lambda entry (`functions/<name>/handler.ts`)
 * builds the parts it needs once per execution environment, from the
 * environment, and hands them to its factory (`functions/<name>/app.ts`); the
 * local stack and tests call the same factories with parts of their own
 * (emulator clients, a collecting log sink, decorated queues).
 *
 * Types only: importing this module adds nothing to a bundle.
 */
import type { CallbackKeys } from '../../shared/callback-tokens.ts';
import type { Config } from '../../shared/config.ts';
import type { EventPublisher } from '../../shared/events/publisher.ts';
import type { DeploymentLinks } from '../../shared/links.ts';
import type { Log } from '../../shared/log.ts';
import type { TaskQueue } from '../../shared/queue/queue.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import type { Tracing } from '../../shared/tracing/tracing.ts';

/** `S`: the store's operations the function calls (its composition gives it those groups only). */
export interface FunctionDeps<S = TaskStore> {
  config: Config;
  store: S;
  queue: TaskQueue;
  /** The tool catalogue, by name. */
  tools: ReadonlyMap<string, ToolDefinition>;
  log: Log;
  /** Where lifecycle events go (EventBridge when deployed); absent: none are published (`-c events=off`). */
  eventPublisher?: EventPublisher | undefined;
  now?: () => number;
  /** Links to the deployment (default: from `config.publicUrl`); the local stack's are settled once it listens. */
  links?: DeploymentLinks;
  /** The keys per purpose (`purposeKeys`): the worker seals callback tokens with one; absent: a callback fails its step. */
  keys?: CallbackKeys;
  /** Spans (absent: the tracing a generated entry installed, else none). */
  tracing?: Tracing | undefined;
}
