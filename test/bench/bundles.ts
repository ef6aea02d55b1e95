/**
 * `npm run bench`, second part: what each function's bundle costs on top of
 * the third-party packages it needs.
 *
 * Every function entry of the stack (`FunctionCode`, with the product toolset's
 * generated entries) is bundled with the stack's esbuild options (`bundlingFor`, mapped to esbuild's API the way
 * aws-cdk-lib's `NodejsFunction` maps them to esbuild's command line; the
 * output is byte for byte the asset `cdk synth` builds), and so
 * is a "bare" entry per function that imports only the packages the
 * function uses ({@link USES}), touching one representative export of each so
 * that it is not tree-shaken away. Printed: sizes and cold-start times side by
 * side with their ratios (the guide's target is at most 1.2× on both), the
 * packages a bundle carries beyond those it uses (found in esbuild's
 * metafile), and, per function, where the extra bytes are.
 *
 * Cold start = a fresh `node` process importing the bundle (with the
 * `NODE_OPTIONS` and configuration variables the stack sets), timed inside the
 * process around `import()`: CPU time (user + system, all threads), which
 * other load on the machine hardly moves, and wall time for reference; the
 * median of N runs, function and bare runs interleaved. Absolute times depend
 * on this machine (Lambda at 512 MB has about a third of a vCPU), the ratios
 * much less.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { productTools } from '../../functions/tools/index.ts';
import { TOOLSET_SOURCES } from '../../infra/app.ts';
import { FUNCTION_MODULES, FunctionCode } from '../../infra/constructs/function-code.ts';
import { bundlingFor } from '../../infra/constructs/task-function.ts';
import { ENV } from '../../shared/config.ts';
import { settingStoresOf } from '../../shared/runtime/settings.ts';
import { bareEntry, USES, WORKFLOW_PACKAGE } from './bare.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Runs per bundle for the cold-start median. */
const RUNS = Number(process.env['BENCH_BUNDLE_RUNS'] ?? 15);
/** The guide's target for both ratios. */
const TARGET_RATIO = 1.2;
/** The repository's Node 22 when installed (closer to Lambda's 24.x), else this one. */
const NODE = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;

/** The default deployment's bundling: `BUNDLING` with the setting stores its tools read, fixed at build time. */
const DEFAULT_BUNDLING = bundlingFor(settingStoresOf(productTools));

/** The default deployment's entries: the product toolset's generated ones for the MCP function and the worker. */
const CODE = new FunctionCode({ tools: TOOLSET_SOURCES.product, projectRoot: ROOT });
/** The product's tools but deploy_release (`test/infra/needs-tools.ts`): a worker with no workflow tool carries no Step Functions client. */
const NO_WORKFLOW_CODE = new FunctionCode({
  tools: { module: fileURLToPath(new URL('../infra/needs-tools.ts', import.meta.url)), export: 'withoutWorkflows' },
  projectRoot: ROOT,
});

/** The stack's bundling as esbuild build options (aws-cdk-lib's `Bundling.buildEsbuildArgs`, for the fields the stack sets). */
function stackBuildOptions(outfile: string): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    format: DEFAULT_BUNDLING.format === 'esm' ? 'esm' : 'cjs',
    target: DEFAULT_BUNDLING.target ?? 'node22',
    minify: DEFAULT_BUNDLING.minify ?? false,
    sourcemap: DEFAULT_BUNDLING.sourceMap ?? false,
    sourcesContent: DEFAULT_BUNDLING.sourcesContent ?? true,
    ...(DEFAULT_BUNDLING.mainFields ? { mainFields: DEFAULT_BUNDLING.mainFields } : {}),
    ...(DEFAULT_BUNDLING.banner ? { banner: { js: DEFAULT_BUNDLING.banner } } : {}),
    ...(DEFAULT_BUNDLING.define ? { define: DEFAULT_BUNDLING.define } : {}),
    // `bundleAwsSDK: true`: nothing is external.
    external: DEFAULT_BUNDLING.bundleAwsSDK ? [] : ['@aws-sdk/*', '@smithy/*'],
    absWorkingDir: ROOT,
    outfile,
    metafile: true,
    logLevel: 'silent',
  };
}

interface Bundle {
  file: string;
  bytes: number;
  metafile: Metafile;
}

async function bundle(outfile: string, input: { entry: string } | { contents: string }): Promise<Bundle> {
  const options = stackBuildOptions(outfile);
  const result = await build(
    'entry' in input
      ? { ...options, entryPoints: [input.entry] }
      : { ...options, stdin: { contents: input.contents, resolveDir: ROOT, sourcefile: 'bare.ts', loader: 'ts' } },
  );
  if (!result.metafile) throw new Error('esbuild returned no metafile');
  return { file: outfile, bytes: statSync(outfile).size, metafile: result.metafile };
}

/** A package's file (the generated entries, under `node_modules/.cache/`, are the deployment's own). */
const isPackagePath = (path: string) => path.includes('node_modules/') && !path.includes('node_modules/.cache/');

/**
 * The package specifiers the function's own code imports (not those its
 * packages import in turn), counting only own modules that made it into the
 * output: a module esbuild dropped (e.g. a setting store's reader no served
 * tool needs) imports nothing into the bundle.
 */
function directPackages(metafile: Metafile): string[] {
  const specifiers = new Set<string>();
  const [, output] = Object.entries(metafile.outputs).find(([path]) => !path.endsWith('.map'))!;
  for (const [path, input] of Object.entries(metafile.inputs)) {
    if (isPackagePath(path) || !(output.inputs[path]?.bytesInOutput ?? 0)) continue;
    for (const imported of input.imports) {
      if (isPackagePath(imported.path) && imported.original && !imported.original.startsWith('node:')) specifiers.add(imported.original);
    }
  }
  return [...specifiers].sort();
}

/** Bytes in the output per input file. */
function bytesByInput(b: Bundle): Map<string, number> {
  const [, output] = Object.entries(b.metafile.outputs).find(([path]) => !path.endsWith('.map'))!;
  return new Map(Object.entries(output.inputs).map(([path, { bytesInOutput }]) => [path, bytesInOutput]));
}

const packageOf = (path: string) => {
  const rest = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length).split('/');
  return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
};

/** Where the function's extra bytes are: own code, and per package the difference to bare, largest first. */
function difference(fn: Bundle, bare: Bundle): Array<[string, number]> {
  const group = (b: Bundle) => {
    const groups = new Map<string, number>();
    for (const [path, bytes] of bytesByInput(b)) {
      const key = isPackagePath(path) ? packageOf(path) : path.startsWith('<stdin>') || path === 'bare.ts' ? '(entry)' : 'own code';
      groups.set(key, (groups.get(key) ?? 0) + bytes);
    }
    return groups;
  };
  const f = group(fn);
  const b = group(bare);
  return [...new Set([...f.keys(), ...b.keys()])]
    .map((key): [string, number] => [key, (f.get(key) ?? 0) - (b.get(key) ?? 0)])
    .filter(([, delta]) => Math.abs(delta) >= 1024)
    .sort((x, y) => y[1] - x[1]);
}

/** Files only the function bundles, by size: what to look at first. */
function extraFiles(fn: Bundle, bare: Bundle, count: number): Array<[string, number]> {
  const inBare = bytesByInput(bare);
  return [...bytesByInput(fn)]
    .filter(([path, bytes]) => isPackagePath(path) && bytes > (inBare.get(path) ?? 0))
    .map(([path, bytes]): [string, number] => [path.slice(path.lastIndexOf('node_modules/') + 13), bytes - (inBare.get(path) ?? 0)])
    .sort((x, y) => y[1] - x[1])
    .slice(0, count);
}

/** The environment the stack gives every function, with placeholders for deploy-time values. */
const ENVIRONMENT = {
  PATH: process.env['PATH'] ?? '',
  AWS_REGION: 'us-east-1',
  NODE_OPTIONS: '--enable-source-maps',
  [ENV.tableName]: 'placeholder-table',
  [ENV.queueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/placeholder-queue',
  [ENV.stackSecretParameter]: '/placeholder/request-state-key',
  [ENV.publicUrl]: 'https://placeholder.execute-api.us-east-1.amazonaws.com',
};

const PROBE = `
const cpu = process.cpuUsage();
const start = performance.now();
const module = await import(process.argv[1]);
const wallMs = performance.now() - start;
const used = process.cpuUsage(cpu);
if (typeof module.handler !== 'function') process.exit(2);
process.stdout.write(JSON.stringify({ cpuMs: (used.user + used.system) / 1000, wallMs }));
`;

interface Start {
  /** CPU time spent in `import()` (user + system). */
  cpuMs: number;
  /** Wall time spent in `import()`. */
  wallMs: number;
}

/** One cold start in a fresh process. */
function coldStart(file: string): Start {
  const child = spawnSync(NODE, ['--input-type=module', '-e', PROBE, pathToFileURL(file).href], {
    cwd: join(file, '..'),
    env: ENVIRONMENT,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (child.status !== 0) throw new Error(`${file} failed to start (exit ${child.status}):\n${child.stderr}`);
  return JSON.parse(child.stdout) as Start;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const ratio = (a: number, b: number) => {
  const r = a / b;
  return `${r.toFixed(2)}×${r > TARGET_RATIO ? ' ⚠' : ''}`;
};

const workDir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bundles-'));
try {
  interface Measured {
    name: string;
    uses: string[];
    /** Packages the function's code imports although its job does not need them. */
    unused: string[];
    fn: Bundle;
    bare: Bundle;
    starts: { fn: Start[]; bare: Start[] };
  }
  const measured: Measured[] = [];
  // The product toolset runs deploy_release: its worker uses Step Functions, and so does its bare bundle.
  const rows: Array<{ label: string; name: keyof typeof FUNCTION_MODULES; code: FunctionCode; uses: string[] }> = [
    ...(Object.keys(FUNCTION_MODULES) as Array<keyof typeof FUNCTION_MODULES>).map((name) => ({
      label: name,
      name,
      code: CODE,
      uses: name === 'worker' ? [...USES.worker, WORKFLOW_PACKAGE] : USES[name],
    })),
    { label: 'worker (no workflow tool)', name: 'worker', code: NO_WORKFLOW_CODE, uses: USES.worker },
  ];
  for (const [index, { label, name, code, uses }] of rows.entries()) {
    const fn = await bundle(join(workDir, `${index}`, 'index.mjs'), { entry: code.entry(name) });
    const unused = directPackages(fn.metafile).filter((specifier) => !uses.includes(specifier));
    const bare = await bundle(join(workDir, `${index}-bare`, 'index.mjs'), { contents: bareEntry(name, uses) });
    measured.push({ name: label, uses, unused, fn, bare, starts: { fn: [], bare: [] } });
  }

  // One unmeasured start each warms the file cache; then runs alternate, so drift hits both sides alike.
  for (const m of measured) {
    coldStart(m.fn.file);
    coldStart(m.bare.file);
  }
  for (let run = 0; run < RUNS; run++) {
    for (const m of measured) {
      m.starts.fn.push(coldStart(m.fn.file));
      m.starts.bare.push(coldStart(m.bare.file));
    }
  }

  const version = spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(
    `\nFunction bundles vs bare bundles of the same packages (esbuild options of the stack; cold start: median of ${RUNS} fresh Node ` +
      `${version} processes)\n`,
  );
  console.log(
    '| function | uses | also bundles | bundle | bare | size ratio | start CPU (ms) | bare | CPU ratio | start wall (ms) | bare | wall ' +
      'ratio |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const m of measured) {
    const cpuFn = median(m.starts.fn.map((s) => s.cpuMs));
    const cpuBare = median(m.starts.bare.map((s) => s.cpuMs));
    const wallFn = median(m.starts.fn.map((s) => s.wallMs));
    const wallBare = median(m.starts.bare.map((s) => s.wallMs));
    console.log(
      `| ${m.name} | ${m.uses.join(', ')} | ${m.unused.join(', ') || '–'} | ${kb(m.fn.bytes)} | ${kb(m.bare.bytes)} | ` +
        `${ratio(m.fn.bytes, m.bare.bytes)} | ` +
        `${cpuFn.toFixed(0)} | ${cpuBare.toFixed(0)} | ${ratio(cpuFn, cpuBare)} | ${wallFn.toFixed(0)} | ${wallBare.toFixed(0)} | ` +
        `${ratio(wallFn, wallBare)} |`,
    );
  }

  console.log('\nWhere the extra bytes are (function minus bare, ≥ 1 KB), and the largest package files only the function bundles:\n');
  for (const m of measured) {
    const groups = difference(m.fn, m.bare).map(([key, delta]) => `${key} ${delta > 0 ? '+' : ''}${kb(delta)}`);
    console.log(`- ${m.name}: ${groups.join(', ') || 'no difference ≥ 1 KB'}`);
    for (const [path, bytes] of extraFiles(m.fn, m.bare, 5)) console.log(`    ${path} +${kb(bytes)}`);
  }
  console.log(`\nTarget: bundle ≤ ${TARGET_RATIO}× bare and start ≤ ${TARGET_RATIO}× bare (⚠ marks a miss).\n`);
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
