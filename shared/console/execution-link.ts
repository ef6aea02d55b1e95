import { executionNameOf, isExecutionArn } from '../engines/stepfunctions/index.ts';

/**
 * Where a workflow tool's task page points its owner for the execution the
 * task follows: the AWS console's page of that Step Functions execution,
 * built from the execution's ARN (its partition and region). The local
 * stack's executions run in its emulator, which has no such page: there the
 * page names the execution without a link.
 */

/** The AWS console's origin per partition, and whether it is per region (`<region>.<host>`). */
const CONSOLE_HOSTS: Readonly<Record<string, { host: string; regional: boolean }>> = {
  aws: { host: 'console.aws.amazon.com', regional: true },
  'aws-cn': { host: 'console.amazonaws.cn', regional: false },
  'aws-us-gov': { host: 'console.amazonaws-us-gov.com', regional: false },
};

/** The execution a task page shows its owner: its name and, deployed, its page in the AWS console. */
export interface ExecutionLink {
  name: string;
  /** Absent on the local stack, and for an ARN of a partition without a known console. */
  url?: string;
}

/**
 * The link of execution `arn` (`undefined` for anything but an execution's
 * ARN); `local`: the local stack's emulator ran it, so no URL.
 */
export function executionLink(arn: string, local: boolean): ExecutionLink | undefined {
  if (!isExecutionArn(arn)) return undefined;
  const name = executionNameOf(arn);
  const [, partition = '', , region = ''] = arn.split(':');
  const console = CONSOLE_HOSTS[partition];
  if (local || !console) return { name };
  const origin = console.regional ? `https://${region}.${console.host}` : `https://${console.host}`;
  // The ARN's characters ([A-Za-z0-9:_-], checked above) need no escaping in the fragment.
  return { name, url: `${origin}/states/home?region=${region}#/v2/executions/details/${arn}` };
}
