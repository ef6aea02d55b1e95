/** `npm run new-tool`: scaffolds a tool that is registered, served, tested and passes the lint as generated. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeSandbox, type Sandbox } from '../support/sandbox.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let sandbox: Sandbox;
before(async () => {
  sandbox = await makeSandbox();
  // The lint's configuration, as `npm run lint` reads it (Biome also reads the ignore file its configuration names).
  for (const file of ['biome.json', '.gitignore']) await copyFile(join(ROOT, file), join(sandbox.root, file));
});
after(async () => {
  await sandbox.remove();
});

/** Runs a command in the sandbox, as `npm run` would (node and tsx of the project). */
function run(args: string[]) {
  // Without the parent's test-runner context, a nested `node --test` reports on stdout as usual.
  const { NODE_TEST_CONTEXT: _parent, ...env } = process.env;
  return spawnSync(process.execPath, ['--import', 'tsx', ...args], { cwd: sandbox.root, env, encoding: 'utf8', timeout: 60_000 });
}

describe('new-tool', () => {
  it('creates a tool and its test, registers it in productTools, and the generated test passes', async () => {
    const created = run(['bin/scripts/new-tool.ts', 'word_count']);
    assert.equal(created.status, 0, created.stderr);
    assert.match(created.stdout, /Created functions\/tools\/word-count\.ts and test\/unit\/tools\/word-count\.test\.ts/);

    const index = await readFile(join(sandbox.root, 'functions/tools/index.ts'), 'utf8');
    assert.match(index, /import \{ wordCount \} from '\.\/word-count\.ts';/);
    assert.match(
      index,
      /productTools: ToolDefinition\[\] = \[\s*batchProcess,\s*approvalGate,\s*externalJob,\s*longComputation,\s*intakeForm,\s*deployRelease,\s*wordCount,?\s*\];/,
    );

    const served = run([
      '-e',
      "const { productTools } = await import('./functions/tools/index.ts'); console.log(productTools.map((t) => t.name).join(','));",
      '--input-type=module',
    ]);
    assert.equal(served.status, 0, served.stderr);
    assert.equal(served.stdout.trim(), 'batch_process,approval_gate,external_job,long_computation,intake_form,deploy_release,word_count');

    const tested = run(['--test', 'test/unit/tools/word-count.test.ts']);
    assert.equal(tested.status, 0, tested.stdout + tested.stderr);
    assert.match(tested.stdout, /# pass 1\n/);
    assert.match(tested.stdout, /# fail 0\n/);
  });

  it('refuses a name that is taken, by a tool of any catalogue or by an earlier scaffold, and writes nothing', async () => {
    const before = await readFile(join(sandbox.root, 'functions/tools/index.ts'), 'utf8');
    for (const name of ['approval_gate', 'slow_compute', 'step_sequence']) {
      const refused = run(['bin/scripts/new-tool.ts', name]);
      assert.equal(refused.status, 1, `${name}: ${refused.stdout}`);
      assert.match(refused.stderr, new RegExp(`A tool named "${name}" already exists`));
    }
    run(['bin/scripts/new-tool.ts', 'once_only']);
    const again = run(['bin/scripts/new-tool.ts', 'once_only']);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /"once_only" already exists/);
    const index = await readFile(join(sandbox.root, 'functions/tools/index.ts'), 'utf8');
    assert.equal(index.match(/onceOnly/g)?.length, 2, 'registered once: one import, one list entry');
    assert.ok(index.startsWith(before.split('\n')[0]!));
  });

  it('refuses names that are not snake_case and unknown options', () => {
    for (const args of [['Bad-Name'], ['1tool'], ['a', 'b'], [], ['ok_name', '--execution', 'later']]) {
      const refused = run(['bin/scripts/new-tool.ts', ...args]);
      assert.equal(refused.status, 1, `${args.join(' ')} should be refused`);
    }
  });

  it('writes files that pass `npm run lint` unedited, wherever the name sorts among the registered tools', () => {
    // `word_count` sorts after every product tool, `abacus_count` before them all.
    const created = run(['bin/scripts/new-tool.ts', 'abacus_count']);
    assert.equal(created.status, 0, created.stderr);
    const generated = ['word-count', 'abacus-count'].flatMap((name) => [`functions/tools/${name}.ts`, `test/unit/tools/${name}.test.ts`]);
    const lint = spawnSync(
      join(ROOT, 'node_modules/.bin/biome'),
      ['check', '--error-on-warnings', 'functions/tools/index.ts', ...generated],
      {
        cwd: sandbox.root,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    assert.equal(lint.status, 0, lint.stdout + lint.stderr);
    assert.match(lint.stdout + lint.stderr, /Checked 5 files/);
  });

  it('takes the execution mode', async () => {
    const created = run(['bin/scripts/new-tool.ts', 'quick_answer', '--execution', 'optional']);
    assert.equal(created.status, 0, created.stderr);
    assert.match(await readFile(join(sandbox.root, 'functions/tools/quick-answer.ts'), 'utf8'), /execution: 'optional'/);
  });
});
