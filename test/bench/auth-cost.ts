/**
 * `npx tsx test/bench/auth-cost.ts`: what a refused request costs.
 *
 * The MCP function (the same factory the Lambda entry uses) with auth on,
 * against a JWKS served on 127.0.0.1, is called in-process with requests an
 * attacker could send for free: no token, a malformed one, a well-signed one
 * for another resource. Printed: the warm handler duration (median and p99 of
 * N calls, after the keys are cached), and the price per million such
 * requests from list prices (us-east-1, x86, late 2026; check current
 * prices): HTTP API $1.00 per million requests; Lambda $0.20 per million
 * requests plus $0.0000166667 per GB-second, billed per 1 ms at the
 * function's 512 MB; CloudWatch Logs ingestion $0.50 per GB for the function's
 * log line and the access log line. Lambda at 512 MB has about a third of a
 * vCPU: the local durations are multiplied by 3 for the estimate.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createMcpHandler } from '../../functions/mcp/app.ts';
import { catalogue, productTools } from '../../functions/tools/index.ts';
import { ENV, loadConfig } from '../../shared/config.ts';
import { jsonLog } from '../../shared/log.ts';
import { InMemoryTaskQueue } from '../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../shared/tasks/memory/index.ts';

const RUNS = Number(process.env['BENCH_AUTH_RUNS'] ?? 2000);
const RESOURCE = 'https://abc.execute-api.us-east-1.amazonaws.com/mcp';
const LAMBDA_CPU_FACTOR = 3;
const PRICE = { httpApiPerMillion: 1.0, lambdaPerMillion: 0.2, gbSecond: 0.0000166667, logsPerGb: 0.5 };
const MEMORY_GB = 0.5;
const ACCESS_LOG_BYTES = 420;

const { privateKey, publicKey } = await generateKeyPair('ES256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'k', alg: 'ES256' };
const jwks = createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(req.url === '/jwks' ? JSON.stringify({ keys: [jwk] }) : JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
});
await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}`;

let loggedBytes = 0;
const config = loadConfig({
  [ENV.tableName]: 't',
  [ENV.queueUrl]: 'q',
  [ENV.authIssuers]: issuer,
  [ENV.authResource]: RESOURCE,
  [ENV.authScopes]: 'tasks',
});
const handler = createMcpHandler({
  config,
  store: new InMemoryTaskStore(config),
  queue: new InMemoryTaskQueue(),
  tools: catalogue(productTools),
  log: jsonLog((line) => (loggedBytes += Buffer.byteLength(line))),
  stackSecret: async () => new Uint8Array(32).fill(7),
});

const sign = (aud: string) =>
  new SignJWT({ scope: 'tasks', sub: 'bench' })
    .setProtectedHeader({ alg: 'ES256', kid: 'k' })
    .setIssuer(issuer)
    .setAudience(aud)
    .setExpirationTime('1h')
    .sign(privateKey);
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
function event(authorization?: string): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /mcp',
    rawPath: '/mcp',
    rawQueryString: '',
    body,
    isBase64Encoded: false,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization ? { authorization } : {}),
    },
    requestContext: {
      accountId: '1',
      apiId: 'abc',
      domainName: 'abc',
      domainPrefix: 'abc',
      requestId: 'r',
      routeKey: 'POST /mcp',
      stage: '$default',
      time: '',
      timeEpoch: 0,
      http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
    },
  };
}

const cases: Array<[string, APIGatewayProxyEventV2, number]> = [
  ['no token', event(), 401],
  ['malformed token', event('Bearer not.a.jwt'), 401],
  ['signed, wrong audience', event(`Bearer ${await sign('https://other.example/mcp')}`), 401],
  ['valid token (tools/list), for comparison', event(`Bearer ${await sign(RESOURCE)}`), 200],
];

console.log(`\nRefused requests: warm MCP function duration on this machine (${RUNS} calls each, keys cached) and estimated price\n`);
console.log('| request | status | median (ms) | p99 (ms) | est. Lambda billed (ms) | log bytes | $ per million |');
console.log('|---|---|---|---|---|---|---|');
for (const [name, e, expected] of cases) {
  const first = (await handler(e)) as APIGatewayProxyStructuredResultV2; // warms the key cache
  if (first.statusCode !== expected) throw new Error(`${name}: expected ${expected}, got ${first.statusCode}`);
  loggedBytes = 0;
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await handler(e);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  const p99 = times[Math.floor(times.length * 0.99)]!;
  const billedMs = Math.max(1, Math.ceil(median * LAMBDA_CPU_FACTOR));
  const logBytes = loggedBytes / RUNS;
  const perMillion =
    PRICE.httpApiPerMillion +
    PRICE.lambdaPerMillion +
    MEMORY_GB * (billedMs / 1000) * PRICE.gbSecond * 1e6 +
    (((logBytes + ACCESS_LOG_BYTES) * 1e6) / 1e9) * PRICE.logsPerGb;
  console.log(
    `| ${name} | ${first.statusCode} | ${median.toFixed(3)} | ${p99.toFixed(3)} | ${billedMs} | ${Math.round(logBytes)} | ` +
      `$${perMillion.toFixed(3)} |`,
  );
}
console.log(`
With an API Gateway JWT authorizer as a pre-filter (context jwtIssuer/jwtAudience), a request without a
valid token is refused before Lambda: only the HTTP API request ($1.00 per million) and its access log line.
`);
jwks.close();
