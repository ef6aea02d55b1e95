import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { principalFor, requesterOf } from '../../shared/auth/principal.ts';
import { INVALID_REQUEST } from '../../shared/wire.ts';

/**
 * An HTTP API (payload 2.0) event as a web `Request`, or a 400 answer when
 * its `Host` or path cannot make a URL (`a b`, `[`, `%zz`): a client's
 * malformed request, not a server error.
 */
export function toRequest(event: APIGatewayProxyEventV2): Request | Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers.set(name, value);
  if (event.cookies?.length) headers.set('cookie', event.cookies.join('; '));
  const host = headers.get('host') ?? event.requestContext.domainName ?? 'localhost';
  const query = event.rawQueryString ? `?${event.rawQueryString}` : '';
  const method = event.requestContext.http.method;
  const body =
    event.body === undefined || method === 'GET' || method === 'HEAD'
      ? undefined
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64')
        : event.body;
  let url: URL;
  try {
    url = new URL(`https://${host}${event.rawPath}${query}`);
  } catch {
    return Response.json(
      { jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'Bad Request: malformed Host header or path' } },
      { status: 400 },
    );
  }
  return new Request(url, { method, headers, ...(body === undefined ? {} : { body }) });
}

/** A web `Response` as an HTTP API result (buffered: the front does not stream). */
export async function toResult(response: Response): Promise<APIGatewayProxyResultV2> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { statusCode: response.status, headers, body: await response.text(), isBase64Encoded: false };
}

/** The caller's name or email claim from a JWT authorizer's claims (`requesterOf`), when it has one. */
export function requesterOfEvent(event: APIGatewayProxyEventV2): string | undefined {
  const authorizer = (event.requestContext as { authorizer?: { jwt?: { claims?: Record<string, unknown> } } }).authorizer;
  return authorizer?.jwt?.claims ? requesterOf(authorizer.jwt.claims) : undefined;
}

/**
 * The caller's principal (issuer + subject) from a JWT authorizer, when the
 * route has one: `undefined` without an authorizer, `null` when its token has
 * no subject (refused: never merged into a shared principal).
 */
export function principalOf(event: APIGatewayProxyEventV2): string | null | undefined {
  const claims = authorizerClaims(event);
  if (!claims) return undefined;
  const sub = claims['sub'];
  const iss = claims['iss'];
  return typeof sub === 'string' && sub !== '' ? principalFor(typeof iss === 'string' ? iss : '', sub) : null;
}

/** The claims of an API Gateway JWT authorizer in front of the route, if it has one. */
export function authorizerClaims(event: APIGatewayProxyEventV2): Record<string, unknown> | undefined {
  const authorizer = (event.requestContext as { authorizer?: { jwt?: { claims?: Record<string, unknown> } } }).authorizer;
  return authorizer?.jwt?.claims;
}
