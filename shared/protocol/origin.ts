import { localhostAllowedOrigins, originValidationResponse } from '@modelcontextprotocol/server';

/**
 * Which browsers' pages may call the endpoint (Streamable HTTP transport:
 * servers MUST validate `Origin`, and answer 403 when it is present and not
 * allowed). A request without `Origin` (any non-browser client) passes.
 *
 * - `loopback`: the local server. Only loopback origins are served; its
 *   HTTP front (`bin/local/http.ts`, standing in for API Gateway) serves
 *   loopback `Host` names only, so a page whose DNS name is rebound to
 *   127.0.0.1 gets 403 (DNS rebinding).
 * - `origins`: a deployment. `Origin` must be one of these exactly (scheme,
 *   host and port, e.g. `https://app.example.com`); the same list drives the
 *   HTTP API's CORS configuration. API Gateway owns the `Host` header.
 */
export type OriginPolicy = { kind: 'loopback' } | { kind: 'origins'; origins: readonly string[] };

/** The refusal to send, or `undefined` when the request may proceed. */
export function originRefusal(request: Request, policy: OriginPolicy): Response | undefined {
  if (policy.kind === 'loopback') {
    return originValidationResponse(request, localhostAllowedOrigins());
  }
  const origin = request.headers.get('origin');
  if (origin === null || policy.origins.includes(origin)) return undefined;
  return Response.json(
    { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: this Origin is not allowed' } },
    { status: 403 },
  );
}
