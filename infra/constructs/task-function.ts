import { type Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, type RecursiveLoop, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { SETTING_STORE_CONSTANTS, type SettingStores } from '../../shared/runtime/settings.ts';
import type { FunctionCode, FunctionName } from './function-code.ts';

/**
 * The one Node.js runtime every function of the stack runs on. cdk-nag (L1)
 * wants the newest Node.js runtime the installed `aws-cdk-lib` knows, which is
 * 24.x for 2.276.
 */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

/**
 * esbuild's syntax target. Node 22 syntax is a subset of what the 24.x runtime
 * runs, and it is the newest Node available on the build machines, where the
 * bundle-start test imports every bundle.
 */
const BUNDLE_TARGET = 'node22';

/**
 * Local esbuild (no Docker), one ESM file per function.
 *
 * - The AWS SDK is bundled rather than taken from the runtime: the code is
 *   tested against the SDK version in `package-lock.json` (the SQS client's
 *   `useQueueUrlAsEndpoint` option, for one, is newer than some runtime SDKs),
 *   and a bundled, tree-shaken SDK starts no slower than the runtime's copy.
 * - The banner gives the ESM bundle a `require`. Today every dependency
 *   resolves to an ESM build and the bundles load without it (checked); it is
 *   there so a CommonJS dependency added later that calls `require('node:…')`
 *   lazily does not fail in production with esbuild's "Dynamic require … is
 *   not supported" — a failure an import-time test would not see.
 * - Source maps are linked files without embedded sources (smaller asset);
 *   `NODE_OPTIONS=--enable-source-maps` makes stack traces point at the `.ts` lines.
 */
export const BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: BUNDLE_TARGET,
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  bundleAwsSDK: true,
  banner: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
};

/** No tool reads a setting: no setting store's client is bundled. */
const NO_SETTING_STORES: SettingStores = { ssmParameter: false, secretsManager: false };

/**
 * The stack's bundling for a function. The setting stores the tools it serves
 * read are fixed at build time (esbuild `define`), so a bundle carries the
 * SSM or Secrets Manager client only when a tool it serves declares a setting
 * kept there (`functions/lib/tool-settings.ts`). Which tools a bundle holds
 * is its entry's: see `tools-module.ts`.
 */
export function bundlingFor(stores: SettingStores = NO_SETTING_STORES): BundlingOptions {
  const define: Record<string, string> = {
    [`process.env.${SETTING_STORE_CONSTANTS.ssmParameter}`]: JSON.stringify(String(stores.ssmParameter)),
    [`process.env.${SETTING_STORE_CONSTANTS.secretsManager}`]: JSON.stringify(String(stores.secretsManager)),
  };
  return { ...BUNDLING, define };
}

export interface TaskFunctionProps {
  /** Which function: its entry is the code's (`code.entry(name)`), and exports `handler`. */
  readonly entry: FunctionName;
  /** Where the functions' entries are and what bundles them. */
  readonly code: FunctionCode;
  readonly description: string;
  readonly memorySize: number;
  readonly timeout: Duration;
  /** Variables named by `ENV` in `shared/config.ts`. */
  readonly environment: Record<string, string>;
  readonly logRetention: RetentionDays;
  /** Applied to the function's log group. */
  readonly removalPolicy: RemovalPolicy;
  /**
   * @default Lambda's (`Terminate`)
   */
  readonly recursiveLoop?: RecursiveLoop;
  /**
   * The setting stores the tools this function runs read; fixes which clients are bundled.
   * @default none
   */
  readonly settingStores?: SettingStores;
  /**
   * Asynchronous invocations only (the sweeper's schedule): retries after a function error.
   * @default 2 (Lambda's)
   */
  readonly retryAttempts?: number;
  /**
   * Asynchronous invocations only: how long an event may wait to be processed.
   * @default 6 hours (Lambda's)
   */
  readonly maxEventAge?: Duration;
  /**
   * Active X-Ray tracing (the stack's `tracing` setting, off by default: see the cost section of docs/deploying.md).
   * @default `false`
   */
  readonly tracing?: boolean;
}

/**
 * A function of the stack: a bundled `NodejsFunction` on {@link LAMBDA_RUNTIME}
 * and ARM64, X-Ray tracing when the stack enables it, its own log group with a retention, and its
 * own role that may write to that log group and nothing else until a
 * construct grants it more (`table.grantReadWriteData`, `queue.grantSendMessages`,
 * event sources).
 */
export class TaskFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: TaskFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: props.removalPolicy });

    // An own role instead of the AWSLambdaBasicExecutionRole managed policy
    // (cdk-nag IAM4): that policy may create any log group and write to all of
    // them; this one writes to this function's log group only.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of: ${props.description}`,
    });
    this.logGroup.grantWrite(this.role);

    this.function = new NodejsFunction(this, 'Function', {
      entry: props.code.entry(props.entry),
      handler: 'handler',
      projectRoot: props.code.projectRoot,
      depsLockFilePath: props.code.depsLockFilePath,
      runtime: LAMBDA_RUNTIME,
      architecture: Architecture.ARM_64,
      description: props.description,
      memorySize: props.memorySize,
      timeout: props.timeout,
      // Off, not pass-through: no trace is sampled or sent at all.
      tracing: props.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      logGroup: this.logGroup,
      role: this.role,
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      bundling: bundlingFor(props.settingStores),
      ...(props.recursiveLoop ? { recursiveLoop: props.recursiveLoop } : {}),
      ...(props.retryAttempts !== undefined ? { retryAttempts: props.retryAttempts } : {}),
      ...(props.maxEventAge ? { maxEventAge: props.maxEventAge } : {}),
    });

    if (!props.tracing) return;
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions (X-Ray ' +
        'accepts only "*"). No other statement of this role uses a wildcard resource.',
    });
  }
}
