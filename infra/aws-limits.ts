/**
 * AWS's own limits the capacity model (`capacity.ts`) checks a workload
 * against, apart from the settings of the stack.
 */

/**
 * AWS's own limits that the model checks (defaults of a new account, us-east-1).
 * Partition limits are DynamoDB's per partition key value, also for a
 * global secondary index's key.
 */
export const AWS_LIMITS = {
  /** Concurrent Lambda executions per account and region (default quota). */
  accountConcurrency: 1000,
  /** HTTP API requests a second per account and region (default quota). */
  httpApiRequestsPerSecond: 10_000,
  /** Write units a second one partition key value takes. */
  partitionWcu: 1000,
  /** Read units a second one partition key value takes. */
  partitionRcu: 3000,
  /** On-demand table throughput per table (default quota, reads and writes each). */
  tableUnitsPerSecond: 40_000,
  /** Messages in flight (received, not deleted) in a standard queue. */
  sqsInFlight: 120_000,
  /** EventBridge `PutEvents` requests a second per account (us-east-1; smaller regions have less). */
  putEventsPerSecond: 10_000,
} as const;
