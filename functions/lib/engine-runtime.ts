/**
 * What an engine's module hands the worker's generated entry (`ENGINE_MODULES`
 * in `infra/constructs/function-code.ts`): the runner that binds the tools on
 * that engine to its adapter. The entry of a deployment imports the engines
 * its tools run on, and only those, so a worker without such tools carries
 * no engine's client, runner or store operations.
 *
 * Types only: importing this module adds nothing to a bundle.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { CallbackKeys } from '../../shared/callback-tokens.ts';
import type { Config } from '../../shared/config.ts';
import type { Log } from '../../shared/log.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';

/** What an engine's runner is given: the worker's configuration, keys, log and DynamoDB client. */
export interface EngineParts {
  config: Config;
  keys: CallbackKeys;
  log: Log;
  dynamodb: DynamoDBClient;
}

export interface EngineRuntime {
  /**
   * The catalogue with the handlers of this engine's tools supplied (any
   * other tool is left as it is). `parts` absent (no stack secret to seal
   * tokens with): its tools fail their runs, naming the missing binding.
   */
  bind(tools: ReadonlyMap<string, ToolDefinition>, parts: EngineParts | undefined): ReadonlyMap<string, ToolDefinition>;
}
