import type { Config } from '../../shared/config.ts';
import { LifecycleEvents } from '../../shared/events/publisher.ts';
import { DeploymentLinks } from '../../shared/links.ts';
import type { FunctionDeps } from './deps.ts';

/**
 * The lifecycle events of a function composed from `deps`: `undefined`
 * without a publisher (events off). Titles stand in for the question
 * messages tools keep out of events; the link is the deployment's own. A
 * function that only ends tasks (the dead-letter handler) needs neither
 * titles nor configuration: end events carry no link.
 */
export function lifecycleEvents(
  deps: Pick<FunctionDeps, 'eventPublisher' | 'log' | 'links'> & {
    config?: Pick<Config, 'publicUrl' | 'maxInputWaitMs'>;
    tools?: FunctionDeps['tools'];
  },
): LifecycleEvents | undefined {
  if (!deps.eventPublisher) return undefined;
  const { tools, config } = deps;
  return new LifecycleEvents({
    publisher: deps.eventPublisher,
    log: deps.log,
    context: {
      links: deps.links ?? new DeploymentLinks(config?.publicUrl),
      ...(config ? { maxInputWaitMs: config.maxInputWaitMs } : {}),
      ...(tools ? { titleOf: (name: string) => tools.get(name)?.title } : {}),
    },
  });
}
