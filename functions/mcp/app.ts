import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import type { ActionStore } from '../../shared/actions/task-actions.ts';
import { isMachine } from '../../shared/auth/machine.ts';
import { createResourceServer, type ResourceServer } from '../../shared/auth/resource-server.ts';
import { createJwtVerifier, type TokenVerifier } from '../../shared/auth/verifier.ts';
import { personPageOf } from '../../shared/console/mode.ts';
import { DeploymentLinks } from '../../shared/links.ts';
import { withLogContext } from '../../shared/log.ts';
import { createEndpoint } from '../../shared/protocol/endpoint.ts';
import type { OriginPolicy } from '../../shared/protocol/origin.ts';
import type { FunctionDeps } from '../lib/deps.ts';
import { lifecycleEvents } from '../lib/events.ts';
import { authorizerClaims, principalOf, requesterOfEvent, toRequest, toResult } from './event.ts';

export type McpHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2>;

/** What the MCP function needs besides the common parts. */
export interface McpDeps extends FunctionDeps<ActionStore> {
  /** The stack's secret, read once (SSM on AWS, a file in the data directory locally): it seals `requestState`, and the purpose keys derive from it. */
  stackSecret: () => Promise<Uint8Array>;
  /** Default: the configured allowed origins (`TASKS_ALLOWED_ORIGINS`); the local stack serves loopback only. */
  originPolicy?: OriginPolicy;
}

/**
 * The MCP function behind an HTTP API: `/mcp` and, when tokens are required,
 * the Protected Resource Metadata routes. Every line logged while serving a
 * request carries API Gateway's request id (the one in the access log).
 *
 * Who the caller is:
 * - with `config.auth`, the function is the resource server: it verifies the
 *   bearer token itself (keys cached for the life of the execution
 *   environment) and binds tasks to its issuer + subject; an API Gateway JWT
 *   authorizer in front, if any, is only a pre-filter;
 * - without it, an API Gateway JWT authorizer's issuer + subject, if the route
 *   has one (a token without a subject is refused); otherwise the configured
 *   local principal (an open endpoint).
 */
export function createMcpHandler(deps: McpDeps & { verifier?: TokenVerifier }): McpHandler {
  const originPolicy = deps.originPolicy ?? { kind: 'origins', origins: deps.config.allowedOrigins };
  const events = lifecycleEvents(deps);
  const links = deps.links ?? new DeploymentLinks(deps.config.publicUrl);
  const personPage = personPageOf(deps.config, links);
  const endpoint = createEndpoint({
    ...deps,
    ...(events ? { events } : {}),
    config: deps.config,
    clientFallback: deps.config.clientFallback,
    originPolicy,
    links,
    signIn: deps.config.auth !== undefined,
    ...(personPage ? { personPage } : {}),
  });
  const auth: ResourceServer | undefined = deps.config.auth
    ? createResourceServer({
        settings: deps.config.auth,
        verifier: deps.verifier ?? createJwtVerifier(deps.config.auth, { log: deps.log, machine: deps.config.machineClaim }),
        tools: deps.tools,
        log: deps.log,
      })
    : undefined;
  return (event) =>
    withLogContext({ requestId: event.requestContext.requestId }, async () => {
      const request = toRequest(event);
      if (request instanceof Response) {
        deps.log({ event: 'bad-request', reason: 'malformed-url' });
        return toResult(request);
      }
      if (auth) {
        const outcome = auth.metadata(request) ?? (await auth.authorize(request));
        if (outcome instanceof Response) return toResult(outcome);
        const { machine, requester } = outcome.token.extra;
        return toResult(await endpoint.fetch(request, outcome.principal, { machine, ...(requester === undefined ? {} : { requester }) }));
      }
      const principal = principalOf(event);
      if (principal === null) return toResult(Response.json({ message: 'Unauthorized' }, { status: 401 }));
      // An authorizer's claims are a verified token's too: the same machine rule applies.
      const claims = authorizerClaims(event);
      const machine = claims !== undefined && isMachine(deps.config.machineClaim, claims);
      const requester = principal ? requesterOfEvent(event) : undefined;
      return toResult(
        await endpoint.fetch(request, principal ?? deps.config.localPrincipal, {
          machine,
          ...(requester === undefined ? {} : { requester }),
        }),
      );
    });
}
