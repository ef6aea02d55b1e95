/**
 * Tool settings and secrets: what a tool declares in `needs.settings` and
 * reads with `ctx.setting(key)`.
 *
 * A {@link SettingReader} fetches one value from where it is kept (SSM
 * Parameter Store and Secrets Manager when deployed, a local file or the
 * environment locally); {@link cachedReader} keeps each value for the life of
 * the execution environment; {@link bindSettings} gives every tool of a
 * catalogue a `ctx.setting` that reads through it. The composition root of
 * each function (and the local stack, and the test kit) binds the catalogue
 * once; the runner itself knows nothing of where values come from.
 */
import type { SettingSource, TaskContext, ToolDefinition } from './tool.ts';

/** Fetches the value of one declared setting. Must never log the value. */
export type SettingReader = (tool: string, key: string, source: SettingSource) => Promise<string>;

/** The stores a set of tools reads settings from, and so the clients a bundle needs. */
export interface SettingStores {
  ssmParameter: boolean;
  secretsManager: boolean;
}

/**
 * Names of the build-time constants that tell a function bundle which
 * setting stores its tools read (esbuild `define`, set by the stack from the
 * served tools' declarations): a bundle whose tools declare no secret carries
 * no Secrets Manager client. The code reads them as
 * `process.env.TASKS_READS_SSM_PARAMETERS` and
 * `process.env.TASKS_READS_SECRETS_MANAGER`, literally, for esbuild to replace.
 */
export const SETTING_STORE_CONSTANTS = {
  ssmParameter: 'TASKS_READS_SSM_PARAMETERS',
  secretsManager: 'TASKS_READS_SECRETS_MANAGER',
} as const satisfies Record<keyof SettingStores, string>;

/** The stores the settings of these tools live in. */
export function settingStoresOf(tools: Iterable<Pick<ToolDefinition, 'needs'>>): SettingStores {
  const stores: SettingStores = { ssmParameter: false, secretsManager: false };
  for (const tool of tools) {
    for (const source of Object.values(tool.needs?.settings ?? {})) {
      if ('ssmParameter' in source) stores.ssmParameter = true;
      else stores.secretsManager = true;
    }
  }
  return stores;
}

/** Whether a setting holds a secret (a Secrets Manager secret or an SSM `SecureString`). */
export function isSecret(source: SettingSource): boolean {
  return 'secretsManager' in source || source.secret === true;
}

/**
 * Reads each distinct source once and keeps its value for the life of the
 * process (a Lambda execution environment): a warm invocation makes no call.
 * A failed read is not kept, so the next run tries again.
 */
export function cachedReader(read: SettingReader): SettingReader {
  const values = new Map<string, Promise<string>>();
  return (tool, key, source) => {
    const id =
      'ssmParameter' in source ? `ssm:${source.ssmParameter}:${source.secret === true}` : `secretsmanager:${source.secretsManager}`;
    let value = values.get(id);
    if (!value) {
      value = read(tool, key, source);
      values.set(id, value);
      value.catch(() => values.delete(id)); // the caller sees (and handles) the rejection
    }
    return value;
  };
}

/**
 * The catalogue with settings bound: each tool's `ctx.setting(key)` reads the
 * source it declares for `key` through `read`. A key the tool did not declare
 * is a programming error and rejects with one.
 */
export function bindSettings(tools: ReadonlyMap<string, ToolDefinition>, read: SettingReader): ReadonlyMap<string, ToolDefinition> {
  return new Map([...tools].map(([name, tool]) => [name, withSettings(tool, read)]));
}

/** One tool with its settings bound (see {@link bindSettings}). */
export function withSettings(tool: ToolDefinition, read: SettingReader): ToolDefinition {
  const declared = tool.needs?.settings ?? {};
  const bind = (ctx: TaskContext): TaskContext => ({
    ...ctx,
    setting: (key) => {
      const source = Object.hasOwn(declared, key) ? declared[key] : undefined;
      if (!source)
        return Promise.reject(new Error(`Tool "${tool.name}" reads setting "${key}", which it does not declare in needs.settings`));
      return read(tool.name, key, source);
    },
  });
  return {
    ...tool,
    handler: (args, ctx) => tool.handler(args, bind(ctx)),
    ...(tool.prepare ? { prepare: (args: Record<string, unknown>, ctx: TaskContext) => tool.prepare!(args, bind(ctx)) } : {}),
  };
}

/**
 * The reader of a deployed function: each kind of source through its own
 * fetcher. A fetcher is absent when no served tool declares that kind (the
 * bundle then lacks its client), which makes such a read an error.
 */
export function storeReader(fetchers: {
  ssmParameter?: (name: string, decrypt: boolean) => Promise<string>;
  secretsManager?: (name: string) => Promise<string>;
}): SettingReader {
  return async (tool, key, source) => {
    if ('ssmParameter' in source) {
      if (!fetchers.ssmParameter) throw new Error(`Setting "${key}" of tool "${tool}": this function was bundled without an SSM client`);
      return fetchers.ssmParameter(source.ssmParameter, source.secret === true);
    }
    if (!fetchers.secretsManager)
      throw new Error(`Setting "${key}" of tool "${tool}": this function was bundled without a Secrets Manager client`);
    return fetchers.secretsManager(source.secretsManager);
  };
}
