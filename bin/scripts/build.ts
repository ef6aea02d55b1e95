/**
 * `npm run build` (run by `npm pack`): compiles the package into `dist/` with
 * the options of `tsconfig.build.json`. The modules compiled are derived, not
 * listed by hand: the sources of `package.json` `exports`, the CLI the
 * `mcp-tasks` launcher runs, and every module synthesis names by path
 * ({@link SYNTHESIS_MODULES}: the functions' entries, the Step Functions
 * engine, the catalogue check); the compiler follows their imports.
 * `tsconfig.build.json` keeps the compiler options and the ambient
 * declarations the sources need. Any diagnostic fails the build.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { SYNTHESIS_MODULES } from '../../infra/constructs/function-code.ts';
import { entryModules } from './api-report.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What `bin/mcp-tasks.js` imports from `dist/` once installed. */
const CLI_MODULE = 'bin/cli/cli.ts';

/** The modules the build starts from, from the repository root. */
export function buildRoots(root = ROOT): string[] {
  return [...new Set([...entryModules(root).map(({ source }) => source), CLI_MODULE, ...SYNTHESIS_MODULES.map((path) => `${path}.ts`)])];
}

/** Compiles the package into `<root>/dist`; returns the diagnostics, formatted (empty when it succeeded). */
function buildPackage(root = ROOT): string {
  const configPath = join(root, 'tsconfig.build.json');
  const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (read.error) return ts.formatDiagnostics([read.error], host(root));
  const config = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath);
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  const files = [...config.fileNames, ...buildRoots(root).map((path) => join(root, path))];
  const program = ts.createProgram({ rootNames: files, options: config.options });
  const emitted = program.emit();
  const diagnostics = [...config.errors, ...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  return diagnostics.length === 0 ? '' : ts.formatDiagnostics(diagnostics, host(root));
}

function host(root: string): ts.FormatDiagnosticsHost {
  return { getCanonicalFileName: (name) => name, getCurrentDirectory: () => root, getNewLine: () => '\n' };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const errors = buildPackage();
  if (errors) {
    process.stderr.write(errors);
    process.exitCode = 1;
  }
}
