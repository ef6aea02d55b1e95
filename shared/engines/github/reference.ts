/**
 * The opaque reference a run carries in its title: an HMAC of the task id
 * under the stack's `github-run-reference` key, never the task id itself.
 * Anyone who can read the repository reads a run's `display_title`, and on
 * an open endpoint a task id is the capability to its result; the reference
 * names the task to this server alone.
 */
import { mac } from '../../keys.ts';

/** The reference's prefix, so a reader of the title (and the search for it) tells it from the workflow's own words. */
export const REFERENCE_PREFIX = 'mcp-';

/** How many characters of the MAC a reference keeps: 128 bits, base64url. */
const REFERENCE_CHARS = 22;

/** The reference of task `taskId` under `key` (the `github-run-reference` purpose key). Deterministic. */
export function runReference(key: Uint8Array, taskId: string): string {
  return `${REFERENCE_PREFIX}${mac(key, ['github-run', taskId]).slice(0, REFERENCE_CHARS)}`;
}

/** Whether a run's title carries `reference` as a word of its own (not inside a longer token). */
export function titleCarries(title: string | null | undefined, reference: string): boolean {
  if (!title) return false;
  return title.split(/[^A-Za-z0-9_-]+/).includes(reference);
}
