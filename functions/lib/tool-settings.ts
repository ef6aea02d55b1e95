import { bindSettings, cachedReader, storeReader } from '../../shared/runtime/settings.ts';
import type { ToolDefinition } from '../../shared/runtime/tool.ts';
import { secretsManagerFetcher } from './secrets-manager.ts';
import { ssmParameterFetcher } from './ssm-parameters.ts';

/**
 * The served catalogue with the tools' settings bound to SSM Parameter Store
 * and Secrets Manager, each value read once per execution environment.
 *
 * The stack replaces the two `process.env.TASKS_READS_*` flags by `"true"` or
 * `"false"` when it bundles a function (esbuild `define`, from the served
 * tools' `needs.settings`; see `SETTING_STORE_CONSTANTS`), so the conditions
 * are decided at build time: a store no served tool reads leaves no reference
 * to its fetcher, and its SDK client is not bundled (`sideEffects: false`).
 * A client is created only once a value is first read.
 */
export function withDeployedSettings(tools: ReadonlyMap<string, ToolDefinition>): ReadonlyMap<string, ToolDefinition> {
  let ssm: ((name: string, decrypt: boolean) => Promise<string>) | undefined;
  let secrets: ((name: string) => Promise<string>) | undefined;
  return bindSettings(
    tools,
    cachedReader(
      storeReader({
        ...(process.env.TASKS_READS_SSM_PARAMETERS === 'true'
          ? { ssmParameter: (name: string, decrypt: boolean) => (ssm ??= ssmParameterFetcher())(name, decrypt) }
          : {}),
        ...(process.env.TASKS_READS_SECRETS_MANAGER === 'true'
          ? { secretsManager: (name: string) => (secrets ??= secretsManagerFetcher())(name) }
          : {}),
      }),
    ),
  );
}
