/**
 * What the console is on a deployment, decided once from the configuration:
 * who may see which tasks, and whether task creation lists tasks at all.
 * Pure: the console function, the MCP function and the stores' policy all
 * decide by it, so a task is listed exactly where a page can list it.
 */
import type { Config } from '../config.ts';
import type { DeploymentLinks } from '../links.ts';
import type { StorePolicy } from '../tasks/store-types.ts';

/** The console's mode. */
export type ConsoleMode =
  /** People sign in at `issuer` (authorization code + PKCE) and see their own tasks. */
  | { kind: 'sign-in'; issuer: string; clientId: string; clientSecret?: string }
  /** An open endpoint whose console lists every task (its one principal's), to anyone who reaches it. */
  | { kind: 'open' }
  /** An open endpoint: a task's page by its id only, as `tasks/get` reads it; no list. */
  | { kind: 'by-id' }
  /** The endpoint has an issuer (or requires tokens) but the console no client there: it shows no task. */
  | { kind: 'off' };

type ConsoleConfig = Pick<Config, 'console' | 'consoleIssuer' | 'consoleClientId' | 'consoleClientSecret' | 'auth'>;

/** The console's mode under `config`. */
export function consoleMode(config: ConsoleConfig): ConsoleMode {
  const { consoleIssuer: issuer, consoleClientId: clientId, consoleClientSecret: clientSecret } = config;
  if (issuer !== undefined && clientId !== undefined) {
    return { kind: 'sign-in', issuer, clientId, ...(clientSecret === undefined ? {} : { clientSecret }) };
  }
  // An issuer without the console's client (or an endpoint that requires tokens): nobody can sign in, so nothing shows.
  if (issuer !== undefined || config.auth !== undefined) return { kind: 'off' };
  return { kind: config.console };
}

/**
 * Whether new tasks are listed for their owners (`StorePolicy.listing`): when
 * a console lists them (people signed in, or an open console), not otherwise
 * (nothing is paid for a list nobody reads). The open endpoint's principal
 * owns every task there: its list is spread over partitions. A function that
 * only creates tasks knows the console's sign-in from its client id.
 */
export function listingOf(config: Pick<Config, 'console' | 'consoleClientId' | 'localPrincipal'>): StorePolicy['listing'] {
  return config.consoleClientId !== undefined || config.console === 'open' ? { sharedOwner: config.localPrincipal } : undefined;
}

/**
 * Where URL-mode elicitation may send a person to decide a question meant
 * for them: the task's page, when `personQuestions` is `url` and that page
 * identifies the person (they sign in to it, or it is served on a loopback
 * address of this machine, the local stack's). On an open deployed endpoint
 * the task id would be the page's only credential, which URL-mode
 * elicitation may not rely on: there questions stay forms (`undefined`).
 */
export function personPageOf(
  config: ConsoleConfig & Pick<Config, 'personQuestions'>,
  links: DeploymentLinks,
): ((taskId: string) => string | undefined) | undefined {
  if (config.personQuestions !== 'url') return undefined;
  // A function that does not serve the console knows its sign-in from the console's client id (as `listingOf`).
  if (config.consoleClientId !== undefined) return (taskId) => links.taskPage(taskId);
  if (config.consoleIssuer !== undefined || config.auth !== undefined) return undefined;
  // An open console: only on this machine's loopback (read at each use: the local stack knows its URL once it listens).
  return (taskId) => (onLoopback(links) ? links.taskPage(taskId) : undefined);
}

/** Whether the deployment is served on a loopback address of this machine (the local stack). */
export function onLoopback(links: DeploymentLinks): boolean {
  const origin = links.origin;
  return origin !== undefined && ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(origin).hostname);
}
