import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { type ActionStore, TaskActions } from '../../shared/actions/task-actions.ts';
import type { CallbackKeys } from '../../shared/callback-tokens.ts';
import { CALLBACKS_PATH } from '../../shared/links.ts';
import { withLogContext } from '../../shared/log.ts';
import { callbackFront } from '../../shared/protocol/callback-front.ts';
import { deliverySpan } from '../../shared/tracing/actions.ts';
import type { FunctionDeps } from '../lib/deps.ts';

export type CallbacksHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

/** What the callbacks function needs (it runs no tool, and reads no principal: the token is the capability). */
export interface CallbacksFunctionDeps extends Pick<FunctionDeps<ActionStore>, 'store' | 'queue' | 'log' | 'now' | 'tracing'> {
  /** The keys per purpose, derived from the stack's secret (`purposeKeys`): the callback token's. */
  keys: CallbackKeys;
}

/**
 * The completion endpoint behind the HTTP API's `/callbacks/{token}` route
 * (`shared/protocol/callback-front.ts`), without an authorizer: it records
 * and resumes through the task actions, as every surface does. Every line
 * logged while serving a request carries API Gateway's request id; none
 * carries the path, which holds the token.
 */
export function createCallbacksHandler(deps: CallbacksFunctionDeps): CallbacksHandler {
  const now = deps.now ?? Date.now;
  const actions = new TaskActions({ store: deps.store, queue: deps.queue, log: deps.log, now, tracing: deps.tracing });
  const front = callbackFront({ actions, keys: deps.keys, log: deps.log, now });
  return (event) =>
    withLogContext({ requestId: event.requestContext.requestId }, async () => {
      const body = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
      const {
        status,
        headers,
        body: answer,
      } = await deliverySpan(deps, `${event.requestContext.http.method} ${CALLBACKS_PATH}`, 'server', () =>
        front({ method: event.requestContext.http.method, token: tokenOf(event.rawPath), body }),
      );
      return {
        statusCode: status,
        headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
        body: JSON.stringify(answer),
      };
    });
}

/** The token: the one path segment under `/callbacks/` (none for any other path). */
function tokenOf(path: string): string | undefined {
  const rest = path.startsWith(`${CALLBACKS_PATH}/`) ? path.slice(CALLBACKS_PATH.length + 1) : '';
  return rest === '' || rest.includes('/') ? undefined : rest;
}
