import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Side effects of the durability fixtures, appended to a file per label under
 * `TASKS_TEST_EFFECTS_DIR`, so a test can count how often each one happened,
 * across processes and across a killed process.
 */
export const EFFECTS_DIR_ENV = 'TASKS_TEST_EFFECTS_DIR';

function fileFor(label: string, dir = process.env[EFFECTS_DIR_ENV]): string {
  if (!dir) throw new Error(`${EFFECTS_DIR_ENV} is not set`);
  mkdirSync(dir, { recursive: true });
  return join(dir, `${label.replace(/[^A-Za-z0-9_-]/g, '_')}.log`);
}

/** Records one side effect (synchronously, so a kill right after cannot lose it). */
export function recordEffect(label: string, entry: string): void {
  appendFileSync(fileFor(label), `${entry}\n`);
}

/** The side effects recorded for `label`, oldest first. */
export function readEffects(label: string, dir?: string): string[] {
  try {
    return readFileSync(fileFor(label, dir), 'utf8').split('\n').filter(Boolean);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
