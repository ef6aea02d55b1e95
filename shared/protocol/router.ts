/**
 * The call router: for one `tools/call`, which way it goes, decided from
 * plain facts about the request, the tool and the deployment. It never
 * throws and touches no I/O (the endpoint gathers the facts, then acts on
 * the route), so every route is a row of a table test
 * (`test/unit/protocol/router.test.ts`).
 *
 * Routes:
 * - `inline`: the tool runs inside the request (a `sync` tool; an `optional`
 *   one whose call is cheap, or that nothing could follow as a task);
 * - `task`: a 2026-07-28 task, answered with a `CreateTaskResult`;
 * - `legacy-task`: a 2025-11-25 task (the call asked with `params.task`);
 * - `fallback`: a durable task for a client that did not declare tasks,
 *   answered with an ordinary `CallToolResult` (see `fallback.ts`);
 * - `fallback-tool`: `task_status`, `task_answer` or `task_cancel`;
 * - `refuse`: `missing-capability` (`-32021`: a task-only tool the fallback
 *   does not serve), or `fallback-tool-declared` (a request that declared the
 *   extension follows tasks with the task methods, not the fallback tools).
 */
import type { Execution } from '../runtime/tool.ts';

/** The protocol era of a request: 2026-07-28 (`modern`) or a 2025-era session (`legacy`). */
export type Era = 'modern' | 'legacy';

/** What is called: a tool of the catalogue (with what decides its route), or one of the fallback tools. */
export type CallTarget =
  | { kind: 'fallback-tool' }
  | {
      kind: 'tool';
      execution: Execution;
      /** False when the tool opts out of the fallback (`fallback: false`). */
      fallback: boolean;
      /** The tool's own `inline(args)` said this call is cheap enough to answer inside the request. */
      cheap: boolean;
    };

/** The facts a route is decided from. */
export interface CallFacts {
  era: Era;
  /** 2026-07-28: the request's envelope declares the tasks extension. */
  declaresTasks: boolean;
  /** 2025-11-25: the call carries `params.task`. */
  asksLegacyTask: boolean;
  /** The deployment serves clients without tasks (`TASKS_CLIENT_FALLBACK`). */
  fallbackOn: boolean;
  target: CallTarget;
}

export type CallRoute =
  | { kind: 'inline' }
  | { kind: 'task' }
  | { kind: 'legacy-task' }
  | { kind: 'fallback' }
  | { kind: 'fallback-tool' }
  | { kind: 'refuse'; reason: 'missing-capability' | 'fallback-tool-declared' };

/** Decides the route of one `tools/call`. Pure: the same facts, the same route. */
export function routeCall(facts: CallFacts): CallRoute {
  const { era, target, fallbackOn } = facts;
  if (target.kind === 'fallback-tool') {
    // The fallback tools are not listed to a declaring request, which has the task methods.
    return era === 'modern' && facts.declaresTasks ? { kind: 'refuse', reason: 'fallback-tool-declared' } : { kind: 'fallback-tool' };
  }
  const { execution } = target;
  if (execution === 'sync') return { kind: 'inline' };
  // A 2025-11-25 client asks per call; a task it asks for takes no input (see legacy-tasks.ts).
  const legacyTask = era === 'legacy' && facts.asksLegacyTask;
  const declared = (era === 'modern' && facts.declaresTasks) || legacyTask;
  const served = fallbackOn && target.fallback;
  if (execution === 'optional' && (target.cheap || (!declared && !served))) return { kind: 'inline' };
  if (!declared) return served ? { kind: 'fallback' } : { kind: 'refuse', reason: 'missing-capability' };
  return legacyTask ? { kind: 'legacy-task' } : { kind: 'task' };
}
