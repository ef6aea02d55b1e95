import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { createEndpoint } from '../../shared/protocol/endpoint.ts';
import { config } from '../lib/config.ts';
import { log } from '../lib/log.ts';
import { queue } from '../lib/queue.ts';
import { store } from '../lib/store.ts';
import { tools } from '../lib/tools.ts';
import { principalOf, toRequest, toResult } from './event.ts';

const endpoint = createEndpoint({ store, queue, tools, settings: config, log });

/**
 * `POST /mcp` behind an HTTP API. Tasks are bound to the authorizer's subject;
 * without an authorizer, to the configured local principal.
 */
export async function handler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> {
  const principal = principalOf(event) ?? config.localPrincipal;
  return toResult(await endpoint.fetch(toRequest(event), principal));
}
