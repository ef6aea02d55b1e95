/**
 * The commands for a project that installed the package: `start`, `dev` and
 * `init` (`start.ts`, `dev.ts`, `init.ts`), loaded only when one runs.
 */
import { Command } from 'commander';
import { Exit } from '../cli/command.ts';
import { DEFAULT_TOOLS_MODULE, type StartOptions } from './start.ts';

export function projectCommands(): Command[] {
  const withTools = (command: Command) =>
    command
      .option('--tools <module>', 'the tools module, from the project folder', DEFAULT_TOOLS_MODULE)
      .option('--export <name>', 'the export of the module that lists the tools', 'tools');
  const start = withTools(new Command('start'))
    .description("run the local stack (no AWS account) serving your project's tools")
    .action(async (options: StartOptions) => {
      const { startProject } = await import('./start.ts');
      await startProject(options);
    });
  const dev = withTools(new Command('dev'))
    .description('`start`, restarted on every edit of your tools')
    .action(async (options: StartOptions) => {
      const { devProject } = await import('./dev.ts');
      const code = await devProject(options);
      if (code !== 0) throw new Exit(code);
    });
  const init = new Command('init')
    .description('create a project with a sample tool, its test and a CDK app (outside any checkout)')
    .argument('<dir>', 'the folder to create')
    .option('--package <spec>', 'what the project depends on for this package (a version range, a tarball or a path)')
    .option('--no-install', 'do not run npm install')
    .action(async (dir: string, options: { package?: string; install: boolean }) => {
      const { initProject } = await import('./init.ts');
      const next = initProject(dir, { install: options.install, ...(options.package ? { package: options.package } : {}) });
      process.stdout.write(`Created ${dir}. Next:\n  ${next}\n`);
    });
  return [start, dev, init];
}
