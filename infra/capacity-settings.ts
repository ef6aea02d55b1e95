/**
 * The settings a workload needs, from the capacity model (`capacity.ts`):
 * the smallest deployment that serves it with headroom, the Service Quotas
 * increases that deployment needs, and the `-c` flags that deploy it.
 */

import { MAX_ACTIVE_INDEX_SHARDS } from '../shared/tasks/dynamodb/index.ts';
import { AWS_LIMITS } from './aws-limits.ts';
import { capacity, type Deployment, defaultDeployment } from './capacity.ts';
import { WORKER_BATCH_SIZE } from './event-sources.ts';
import type { Workload } from './per-task.ts';
import { throttleFor } from './sizing.ts';

/** What a deployment is besides its sizing: the settings that change what each task costs. */
export type DeploymentConditions = Partial<Pick<Deployment, 'maxUnfinishedTasks' | 'issuer' | 'listed' | 'approvals' | 'events'>>;

/**
 * The smallest settings that serve a workload with headroom (`headroom`,
 * default 1.25: a quarter above the steady rate, for bursts and uneven
 * batches and shards): the throttle, worker concurrency and shard count to
 * deploy with, and the account quotas (Lambda concurrency, HTTP API
 * requests) to ask for where the defaults do not do. Settings never go below the defaults.
 */
export function settingsFor(workload: Workload, conditions: DeploymentConditions = {}, headroom = 1.25): Deployment {
  const defaults = { ...defaultDeployment(), ...conditions };
  const probe = capacity(workload, defaults);
  const workerMaxConcurrency = Math.min(
    1000,
    Math.max(defaults.workerMaxConcurrency, Math.ceil((probe.concurrency.workerRecords * headroom) / WORKER_BATCH_SIZE)),
  );
  const sized = throttleFor(workerMaxConcurrency);
  const needed = Math.ceil((probe.rates.apiRequests * headroom) / 50) * 50;
  const throttleRateLimit = Math.max(sized.rateLimit, needed);
  const shardsNeeded = Math.ceil((probe.rates.indexWcuPerShard * defaults.activeIndexShards * headroom) / AWS_LIMITS.partitionWcu);
  const activeIndexShards = Math.min(MAX_ACTIVE_INDEX_SHARDS, Math.max(defaults.activeIndexShards, powerOfTwoAtLeast(shardsNeeded)));
  const deployment = { ...defaults, throttleRateLimit, throttleBurstLimit: 2 * throttleRateLimit, workerMaxConcurrency, activeIndexShards };
  const total = capacity(workload, deployment).concurrency.total;
  const accountConcurrency = Math.max(defaults.accountConcurrency, Math.ceil((total * headroom) / 100) * 100);
  // Above the account's quota the stage throttle would be moot: ask for at least the throttle.
  const apiQuota = Math.max(defaults.apiQuota, Math.ceil(Math.max(probe.rates.apiRequests * headroom, throttleRateLimit) / 1000) * 1000);
  return { ...deployment, accountConcurrency, apiQuota };
}

function powerOfTwoAtLeast(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** The Service Quotas increases a deployment needs beyond a new account's, in words (none: empty). */
export function quotaRequests(deployment: Deployment): string[] {
  const defaults = defaultDeployment();
  const requests: string[] = [];
  if (deployment.accountConcurrency > defaults.accountConcurrency)
    requests.push(`Lambda concurrent executions ${deployment.accountConcurrency.toLocaleString('en-US')}`);
  if (deployment.apiQuota > defaults.apiQuota) requests.push(`HTTP API throttle ${deployment.apiQuota.toLocaleString('en-US')}/s`);
  return requests;
}

/** The context flags that deploy `deployment` (only those that differ from the defaults). */
export function contextFlags(deployment: Deployment): string[] {
  const defaults = defaultDeployment();
  const flags: string[] = [];
  if (deployment.workerMaxConcurrency !== defaults.workerMaxConcurrency)
    flags.push(`-c workerMaxConcurrency=${deployment.workerMaxConcurrency}`);
  const sized = throttleFor(deployment.workerMaxConcurrency);
  if (deployment.throttleRateLimit !== sized.rateLimit) flags.push(`-c throttleRateLimit=${deployment.throttleRateLimit}`);
  if (deployment.throttleBurstLimit !== 2 * deployment.throttleRateLimit)
    flags.push(`-c throttleBurstLimit=${deployment.throttleBurstLimit}`);
  if (deployment.activeIndexShards !== defaults.activeIndexShards) flags.push(`-c activeIndexShards=${deployment.activeIndexShards}`);
  if (deployment.sweepIntervalMinutes !== defaults.sweepIntervalMinutes)
    flags.push(`-c sweepIntervalMinutes=${deployment.sweepIntervalMinutes}`);
  if (!deployment.events) flags.push('-c events=off');
  return flags;
}
