import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { withLogContext } from '../../shared/log.ts';
import { createEndpoint } from '../../shared/protocol/endpoint.ts';
import type { OriginPolicy } from '../../shared/protocol/origin.ts';
import type { FunctionDeps } from '../lib/deps.ts';
import { principalOf, toRequest, toResult } from './event.ts';

export type McpHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2>;

/** What the MCP function needs besides the common parts. */
export interface McpDeps extends FunctionDeps {
  /** The `requestState` sealing key, read once (SSM on AWS, a key file locally). */
  requestStateKey: () => Promise<Uint8Array>;
  /** Default: the configured allowed origins (`TASKS_ALLOWED_ORIGINS`); the local stack serves loopback only. */
  originPolicy?: OriginPolicy;
}

/**
 * `POST /mcp` behind an HTTP API. Tasks are bound to the authorizer's subject;
 * without an authorizer, to the configured local principal. Every line logged
 * while serving a request carries API Gateway's request id (the one in the
 * access log).
 */
export function createMcpHandler(deps: McpDeps): McpHandler {
  const originPolicy = deps.originPolicy ?? { kind: 'origins', origins: deps.config.allowedOrigins };
  const endpoint = createEndpoint({ ...deps, settings: deps.config, originPolicy });
  return (event) =>
    withLogContext({ requestId: event.requestContext.requestId }, async () => {
      const request = toRequest(event);
      if (request instanceof Response) {
        deps.log({ event: 'bad-request', reason: 'malformed-url' });
        return toResult(request);
      }
      const principal = principalOf(event) ?? deps.config.localPrincipal;
      return toResult(await endpoint.fetch(request, principal));
    });
}
