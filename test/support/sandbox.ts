/**
 * A throw-away copy of the project for tests that edit source files (the
 * scaffold command, the watch mode): the code folders and manifests copied,
 * `node_modules` linked. Nothing in the working tree is touched.
 */
import { cp, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COPIED = ['functions', 'shared', 'infra', 'bin', 'test/support', 'kit', 'package.json', 'tsconfig.json'];

export interface Sandbox {
  root: string;
  remove(): Promise<void>;
}

export async function makeSandbox(): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), 'mcp-tasks-sandbox-'));
  for (const path of COPIED) await cp(join(ROOT, path), join(root, path), { recursive: true });
  await symlink(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}
