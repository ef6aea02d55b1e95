import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { withLogContext } from '../../shared/log.ts';
import { createEndpoint } from '../../shared/protocol/endpoint.ts';
import type { FunctionDeps } from '../lib/deps.ts';
import { principalOf, toRequest, toResult } from './event.ts';

export type McpHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2>;

/**
 * `POST /mcp` behind an HTTP API. Tasks are bound to the authorizer's subject;
 * without an authorizer, to the configured local principal. Every line logged
 * while serving a request carries API Gateway's request id (the one in the
 * access log).
 */
export function createMcpHandler(deps: FunctionDeps): McpHandler {
  const endpoint = createEndpoint({ ...deps, settings: deps.config });
  return (event) =>
    withLogContext({ requestId: event.requestContext.requestId }, async () => {
      const principal = principalOf(event) ?? deps.config.localPrincipal;
      return toResult(await endpoint.fetch(toRequest(event), principal));
    });
}
