import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { handle } from 'hono/aws-lambda';
import { type ActionStore, TaskActions } from '../../shared/actions/task-actions.ts';
import { createConsoleApp } from '../../shared/console/app.tsx';
import { consoleMode } from '../../shared/console/mode.ts';
import type { Keys } from '../../shared/console/session.ts';
import { oidcSignIn, type SignIn } from '../../shared/console/sign-in.ts';
import { DeploymentLinks } from '../../shared/links.ts';
import { withLogContext } from '../../shared/log.ts';
import type { SignInNameStore } from '../../shared/tasks/sign-in-names-store.ts';
import type { SignOutStore } from '../../shared/tasks/sign-outs-store.ts';
import type { FunctionDeps } from '../lib/deps.ts';
import { lifecycleEvents } from '../lib/events.ts';

export type ConsoleHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2>;

/** What the console function needs besides the common parts (it runs no tool). */
export interface ConsoleFunctionDeps extends Omit<FunctionDeps<ActionStore & SignOutStore & SignInNameStore>, 'tools'> {
  /** The keys per purpose, derived from the stack's secret (`purposeKeys`). */
  keys: Keys;
  /** The console client's secret, for an issuer that requires one (Secrets Manager, read once). */
  clientSecret?: () => Promise<string>;
  /** The sign-in (default: `openid-client` against the configured issuer); tests give their own. */
  signIn?: SignIn;
}

/**
 * The console behind the HTTP API's `/console` routes: the pages of
 * `shared/console/` as a Hono app, through Hono's Lambda adapter (payload
 * 2.0; several `Set-Cookie` headers leave in the result's `cookies`). Every
 * line logged while serving a request carries API Gateway's request id.
 */
export function createConsoleHandler(deps: ConsoleFunctionDeps): ConsoleHandler {
  const now = deps.now ?? Date.now;
  const { config, log } = deps;
  const mode = consoleMode(config);
  const links = deps.links ?? new DeploymentLinks(config.publicUrl);
  const events = lifecycleEvents({ ...deps, links });
  const signIn =
    mode.kind !== 'sign-in'
      ? undefined
      : (deps.signIn ??
        oidcSignIn({
          issuer: mode.issuer,
          clientId: mode.clientId,
          redirectUri: links.consoleCallback!,
          scopes: config.approvers.scopes,
          ...(deps.clientSecret ? { clientSecret: deps.clientSecret } : {}),
        }));
  const app = createConsoleApp({
    actions: new TaskActions({ store: deps.store, queue: deps.queue, log, now, ...(events ? { events } : {}) }),
    mode,
    links,
    keys: deps.keys,
    signOutRecords: deps.store,
    signInNameRecords: deps.store,
    config: config,
    approvers: config.approvers,
    events: events !== undefined,
    localPrincipal: config.localPrincipal,
    log,
    now,
    ...(signIn ? { signIn } : {}),
  });
  const lambda = handle(app);
  return (event) =>
    withLogContext({ requestId: event.requestContext.requestId }, async () => (await lambda(event as never)) as APIGatewayProxyResultV2);
}
