/**
 * List prices (us-east-1, no free tier) and the per-invocation figures that
 * cannot be measured without an AWS account: what the capacity model
 * (`capacity.ts`) and the AWS-calls bench (`test/bench/pricing.ts`) price with.
 */

/**
 * DynamoDB on-demand, SQS standard, Lambda on ARM, HTTP API, CloudWatch Logs
 * (standard ingestion), X-Ray, EventBridge custom events (per event of up to
 * 64 KB, on any bus; 2026 list price).
 */
export const PRICE = {
  wru: 0.625 / 1e6,
  rru: 0.125 / 1e6,
  sqsRequest: 0.4 / 1e6,
  lambdaRequest: 0.2 / 1e6,
  lambdaGbSecond: 0.0000133334,
  httpApiRequest: 1.0 / 1e6,
  logsGb: 0.5,
  xrayTrace: 5.0 / 1e6,
  eventBridgeEvent: 1.0 / 1e6,
} as const;

/**
 * Assumed per invocation (warm, 512 MB, ARM): billed duration of an MCP
 * request and of a worker run besides the tool's own time; the platform's
 * START/END/REPORT lines and the API access log line. The load bench
 * (`npm run bench:load`) prints the CPU time the handlers take locally, to
 * check these against.
 */
export const ASSUMED = { mcpMs: 50, workerMs: 100, memoryGb: 0.5, platformLogBytes: 350, accessLogBytes: 300 } as const;
