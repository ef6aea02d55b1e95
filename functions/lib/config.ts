/**
 * The functions' configuration, read once per execution environment from the
 * variables the stack sets (`ENV`); a missing required value fails the cold
 * start, not the first request.
 *
 * The composition root is split by what each module pulls into a bundle: a
 * Lambda entry imports the modules it needs by path (`config.ts`, `log.ts`,
 * `store.ts`, `queue.ts`, `tools.ts`), so the dead-letter handler, for one,
 * bundles neither the SQS client nor zod. `deps.ts` gathers them for tests.
 */
import { loadConfig } from '../../shared/config.ts';

export const config = loadConfig();
