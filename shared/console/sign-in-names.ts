/**
 * "Who asks" on a task's pages: the name or email claim of the caller's MCP
 * token when the row keeps one (`requester`); else the owner's name from
 * their last console sign-in; else the subject of their principal.
 *
 * The middle comes from a record the console writes at each sign-in whose
 * ID token has a `name` or `email` (one write to the task table,
 * `SignInNameStore`), kept {@link signInNameKeepMs}: as long as a task
 * started during the sign-in's session can wait for its longest input wait
 * and stay readable for the retention. A page reads it at most once (an
 * eventually consistent read), only when the row keeps no requester, and not
 * at all when the person looking is the owner and their session knows their
 * name, or when nobody signs in to this console. Personal data: it is shown
 * on the task's page to its owner and approvers and by `ops inspect`, never
 * logged or published.
 */
import type { TaskSettings } from '../config.ts';
import { errorName, type Log } from '../log.ts';
import type { TaskRecord } from '../tasks/model.ts';
import type { SignInNameStore } from '../tasks/sign-in-names-store.ts';
import type { ConsoleMode } from './mode.ts';
import { SESSION_SECONDS, type Session } from './session.ts';
import { whoAsks } from './words.ts';

export interface SignInNames {
  /** Records the name `principal` signed in with. One write; a failure is logged, and the sign-in goes on. */
  record(principal: string, name: string): Promise<void>;
  /** Who asks on `task`'s page, for the person of `session`. At most one read. */
  whoAsks(task: TaskRecord, session: Session | undefined): Promise<string>;
}

/** How long a sign-in's name is kept: the session it starts, the longest input wait, then the retention. */
export function signInNameKeepMs(config: Pick<TaskSettings, 'retentionMs' | 'maxInputWaitMs'>): number {
  return SESSION_SECONDS * 1000 + config.maxInputWaitMs + config.retentionMs;
}

export function signInNames(
  store: SignInNameStore,
  deps: { mode: ConsoleMode; config: Pick<TaskSettings, 'retentionMs' | 'maxInputWaitMs'>; log: Log; now: () => number },
): SignInNames {
  const read = async (task: TaskRecord) => {
    try {
      return await store.signInNameOf(task.owner, deps.now());
    } catch (error) {
      // The name only adorns the page: it names the subject instead.
      deps.log({ event: 'console-sign-in-name-failed', op: 'read', taskId: task.taskId, error: errorName(error) });
      return undefined;
    }
  };
  return {
    async record(principal, name) {
      const at = deps.now();
      try {
        await store.recordSignInName(principal, name, at, at + signInNameKeepMs(deps.config));
      } catch (error) {
        deps.log({ event: 'console-sign-in-name-failed', op: 'record', error: errorName(error) });
      }
    },
    async whoAsks(task, session) {
      // Nobody signs in to an open console: no name was recorded to read.
      if (task.requester !== undefined || deps.mode.kind !== 'sign-in') return whoAsks(task);
      if (session?.principal === task.owner && session.requester !== undefined) return whoAsks(task, session.requester);
      return whoAsks(task, await read(task));
    },
  };
}
