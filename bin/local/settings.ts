import { readFile } from 'node:fs/promises';
import type { SettingReader } from '../../shared/runtime/settings.ts';
import { ToolProtocolError } from '../../shared/runtime/tool.ts';
import { INTERNAL_ERROR } from '../../shared/wire.ts';

/** The settings file `npm start` reads when `LOCAL_SETTINGS_FILE` does not name another. */
export const DEFAULT_LOCAL_SETTINGS_FILE = 'settings.local.json';

/**
 * The environment variable that sets a tool's setting locally:
 * `<TOOL>_<KEY>` in upper snake case, e.g. `fetch_report` + `apiKey` →
 * `FETCH_REPORT_API_KEY`.
 */
export function settingVariable(tool: string, key: string): string {
  const snake = (text: string) =>
    text
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/[^A-Za-z0-9]+/g, '_')
      .toUpperCase();
  return `${snake(tool)}_${snake(key)}`;
}

/**
 * Where the local stack takes tool settings from instead of SSM and Secrets
 * Manager: the variable {@link settingVariable} names, else the file (JSON,
 * `{ "<tool>": { "<key>": "<value>" } }`, kept out of git). The file is read
 * once, when the first setting is. A setting found in neither ends the task
 * `failed` with a message naming both places (never a value).
 */
export function localSettingReader(options: { file: string; env: Record<string, string | undefined> }): SettingReader {
  let file: Promise<Record<string, Record<string, unknown>>> | undefined;
  const load = async (): Promise<Record<string, Record<string, unknown>>> => {
    let text: string;
    try {
      text = await readFile(options.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error(`${options.file} must hold an object of tools' settings`);
    return parsed as Record<string, Record<string, unknown>>;
  };
  return async (tool, key) => {
    const variable = settingVariable(tool, key);
    const fromEnv = options.env[variable];
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    if (!file) {
      file = load();
      file.catch(() => (file = undefined)); // read again once the file is fixed; the caller sees the error
    }
    const fromFile = (await file)[tool]?.[key];
    if (typeof fromFile === 'string') return fromFile;
    throw new ToolProtocolError(
      INTERNAL_ERROR,
      `Setting "${key}" of tool "${tool}" is not set locally: set ${variable} or add it to ${options.file}`,
    );
  };
}
