/**
 * The settings tables of `docs/configuration.md`, rendered from the tables in the code: the
 * functions' settings (`SETTINGS`, `shared/config.ts`, joined with what the docs say of
 * them, `SETTING_DOCS`, `shared/config-docs.ts`) with the values the
 * stack sets (`infra/timings.ts`), the stack's context keys (`CONTEXT`,
 * `infra/context.ts`) and `npm start`'s variables (`LOCAL_ENV`,
 * `bin/local/environment.ts`). `npx tsx bin/scripts/config-tables.ts`
 * rewrites them in that page; `test/unit/config.test.ts` fails when they are stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CONTEXT } from '../../infra/context.ts';
import { durableTimings, timingsEnvironment } from '../../infra/timings.ts';
import { SETTINGS } from '../../shared/config.ts';
import { SETTING_DOCS } from '../../shared/config-docs.ts';
import { formatDuration } from '../../shared/durations.ts';
import type { Setting } from '../../shared/setting-readers.ts';
import { LOCAL_ENV } from '../local/environment.ts';

export const CONFIGURATION_PAGE = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));

/**
 * A setting's default as its reader gives it: a duration (its variable ends in `_MS`) or a
 * number; `(required)` when reading it unset throws; else none.
 */
function readerDefault(setting: Setting): string {
  if ('fallback' in setting && typeof setting.fallback === 'number') {
    return setting.env.endsWith('_MS') ? `${setting.fallback} (${formatDuration(setting.fallback)})` : String(setting.fallback);
  }
  try {
    setting.read(undefined);
    return 'none';
  } catch {
    return '(required)';
  }
}

/** The Configuration table: every `TASKS_*` variable, its `npm start` default and what the stack sets. */
function settingsTable(): string {
  const stackTimings = timingsEnvironment(durableTimings());
  const rows = (Object.keys(SETTINGS) as (keyof typeof SETTINGS)[]).map((key) => {
    const setting: Setting = SETTINGS[key];
    const docs = SETTING_DOCS[key];
    const timing = stackTimings[setting.env];
    const deployed = timing !== undefined ? `${timing} (${formatDuration(Number(timing))})` : (docs.deployed ?? 'the default');
    return `| \`${setting.env}\` | ${docs.shown ?? readerDefault(setting)} | ${deployed} | ${docs.meaning} |`;
  });
  return ['| variable | default | deployed | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The deploy parameters: every context key, its default and meaning. */
function contextTable(): string {
  const rows = Object.entries(CONTEXT).map(([key, entry]) => {
    const shown = 'shown' in entry ? entry.shown : 'default' in entry ? `\`${entry.default}\`` : 'none';
    return `| \`${key}\` | ${shown} | ${entry.meaning} |`;
  });
  return ['| context | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** `npm start`'s own variables. */
function localTable(): string {
  const rows = Object.values(LOCAL_ENV).map((entry) => `| \`${entry.env}\` | ${entry.shown} | ${entry.meaning} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

const TABLES: Record<string, () => string> = { settings: settingsTable, context: contextTable, local: localTable };

/** `page` with each `<!-- table: name -->` … `<!-- /table -->` section rendered afresh. */
export function withTables(page: string): string {
  return page.replace(/(<!-- table: (\w+) -->\n)[\s\S]*?(<!-- \/table -->)/g, (_whole, open: string, name: string, close: string) => {
    const render = TABLES[name];
    if (!render) throw new Error(`The page names an unknown table "${name}"`);
    return `${open}${render()}\n${close}`;
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const before = readFileSync(CONFIGURATION_PAGE, 'utf8');
  const after = withTables(before);
  if (after !== before) writeFileSync(CONFIGURATION_PAGE, after);
  console.log(after === before ? 'docs/configuration.md tables are current' : 'docs/configuration.md tables rewritten');
}
