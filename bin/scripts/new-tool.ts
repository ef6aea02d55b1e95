/**
 * `npm run new-tool -- <name> [--execution task|optional|sync]`: scaffolds a tool.
 * Without a name, on a terminal, it asks for the name and the execution mode.
 *
 * Creates `functions/tools/<name>.ts` (a working tool with one step and a
 * progress report, to edit), registers it in `productTools`
 * (`functions/tools/index.ts`), and adds `test/unit/tools/<name>.test.ts`,
 * which runs it through the test kit. Refuses a name that is not snake_case,
 * that a tool of any catalogue (product, conformance, test fixtures) already
 * has, or whose files exist. Writes nothing unless every check passes.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { input, select } from '@inquirer/prompts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const INDEX = join(ROOT, 'functions/tools/index.ts');
const EXECUTIONS = ['task', 'optional', 'sync'] as const;
type Execution = (typeof EXECUTIONS)[number];

/** MCP allows more, but one shape keeps file, export and tool names derivable from each other. */
const NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

const usage = 'Usage: npm run new-tool -- <name> [--execution task|optional|sync]   (name in snake_case, e.g. fetch_report)';

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

let parsed: ReturnType<
  typeof parseArgs<{
    allowPositionals: true;
    options: { execution: { type: 'string'; short: 'e'; default: 'task' }; help: { type: 'boolean'; short: 'h' } };
  }>
>;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { execution: { type: 'string', short: 'e', default: 'task' }, help: { type: 'boolean', short: 'h' } },
  });
} catch (error) {
  fail(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
}
if (parsed.values.help) {
  console.log(usage);
  process.exit(0);
}
const interactive = parsed.positionals.length === 0 && process.stdin.isTTY === true && process.stdout.isTTY === true;
const [name, ...extra] = interactive
  ? [await input({ message: 'Tool name (snake_case)', validate: (value) => NAME.test(value) || 'snake_case, e.g. fetch_report' })]
  : parsed.positionals;
if (!name || extra.length > 0) fail(usage);
if (!NAME.test(name) || name.length > 64) fail(`"${name}" is not a snake_case name of at most 64 characters.\n${usage}`);
const execution = (
  interactive
    ? await select({
        message: 'How may it run?',
        choices: [
          { value: 'task', name: 'task: only as a task' },
          { value: 'optional', name: 'optional: as a task when the client asks, else inside the request' },
          { value: 'sync', name: 'sync: always inside the request' },
        ],
      })
    : parsed.values.execution
) as Execution;
if (!EXECUTIONS.includes(execution)) fail(`--execution must be one of ${EXECUTIONS.join(', ')}, got "${execution}"`);

const kebab = name.replaceAll('_', '-');
const exportName = name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
const toolFile = join(ROOT, 'functions/tools', `${kebab}.ts`);
const testFile = join(ROOT, 'test/unit/tools', `${kebab}.test.ts`);

// Every catalogue, so a new tool can be served next to any toolset's.
const { productTools } = await import('../../functions/tools/index.ts');
const { conformanceTools } = await import('../../functions/fixtures/conformance.ts');
const { testingTools } = await import('../../functions/fixtures/durability/fixtures.ts');
const taken = [...productTools, ...conformanceTools, ...testingTools].find((tool) => tool.name === name);
if (taken) fail(`A tool named "${name}" already exists; choose another name.`);
for (const file of [toolFile, testFile]) {
  if (existsSync(file)) fail(`${relative(ROOT, file)} already exists; choose another name.`);
}

const index = await readFile(INDEX, 'utf8');
const catalogue = /(export const productTools: ToolDefinition\[\] = \[)([^\]]*)(\];)/;
const imports = [...index.matchAll(/^import .* from '([^']+)';$/gm)];
if (!catalogue.test(index) || imports.length === 0) {
  fail(`Could not find the productTools list in ${relative(ROOT, INDEX)}; add ${exportName} to it by hand.`);
}
// Among the tools' own imports (`./…`), in the order the linter sorts them; after every import otherwise.
const source = `./${kebab}.ts`;
const next = imports.find(([, from]) => from!.startsWith('./') && from! > source);
const at = next ? next.index! : imports.at(-1)!.index! + imports.at(-1)![0].length + 1;
const registered =
  index.slice(0, at) +
  `import { ${exportName} } from '${source}';\n` +
  index.slice(at).replace(catalogue, (_, open: string, items: string, close: string) => catalogueList(open, items, close));

/** The catalogue with the new tool last, laid out as the formatter lays it: on one line if it fits in 140 columns, else one per line. */
function catalogueList(open: string, items: string, close: string): string {
  const names = [...items.split(',').map((item) => item.trim()), exportName].filter(Boolean);
  const line = `${open}${names.join(', ')}${close}`;
  return line.length <= 140 ? line : `${open}\n${names.map((name) => `  ${name},\n`).join('')}${close}`;
}

await mkdir(dirname(testFile), { recursive: true });
const inline =
  execution === 'task'
    ? ''
    : execution === 'sync'
      ? ' It is answered inside the request.'
      : ' It runs as a task when the client asks for one, inside the request otherwise.';
await writeFile(
  toolFile,
  `import * as z from 'zod';
import { defineTool } from '#tool';

/**
 * ${name}: counts the words of a text. Replace with what your tool does.${inline}
 *
 * Replay rules: the handler runs from the start on every resume, so anything
 * non-deterministic (time, ids, I/O) goes in a \`ctx.step\`, which runs once
 * and is replayed from its checkpoint. See docs/tools.md.
 */
export const ${exportName} = defineTool({
  name: '${name}',
  description: 'Counts the words of a text.',
  inputSchema: z.object({
    text: z.string().max(100_000).describe('The text to count the words of'),
  }),
  execution: '${execution}',
  handler: async ({ text }, ctx) => {
    const words = await ctx.step('count', async () => text.split(/\\s+/).filter(Boolean).length);
    await ctx.progress(\`Counted \${words} words\`);
    return { content: [{ type: 'text', text: \`\${words} words\` }], structuredContent: { words } };
  },
});
`,
  { flag: 'wx' },
);
await writeFile(
  testFile,
  `import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testTool, textOf } from '#tool-kit';
import { ${exportName} } from '../../../functions/tools/${kebab}.ts';

describe('${name}', () => {
  it('counts the words of a text', async () => {
    const run = testTool(${exportName}, { text: 'one two  three' });
    const result = await run.result();
    assert.equal(textOf(result), '3 words');
    assert.deepEqual(result.structuredContent, { words: 3 });
    assert.deepEqual([...run.checkpoints], [['count', 3]]);
    assert.deepEqual(run.progress, ['Counted 3 words']);
  });
});
`,
  { flag: 'wx' },
);
await writeFile(INDEX, registered);

console.log(`Created ${relative(ROOT, toolFile)} and ${relative(ROOT, testFile)}; registered ${exportName} in productTools (${relative(ROOT, INDEX)}).

Next:
  node --import tsx --test ${relative(ROOT, testFile)}   # its test
  npm run dev                                            # the local stack, restarting on edits
Then call it: see docs/tools.md.`);
