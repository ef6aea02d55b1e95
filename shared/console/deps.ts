/** What the console's routes are built from (see `createConsoleApp` in `app.tsx`). */

import type { TaskActions } from '../actions/task-actions.ts';
import type { Approvers } from '../auth/approvers.ts';
import type { TaskSettings } from '../config.ts';
import type { DeploymentLinks } from '../links.ts';
import type { Log } from '../log.ts';
import type { SignInNameStore } from '../tasks/sign-in-names-store.ts';
import type { SignOutStore } from '../tasks/sign-outs-store.ts';
import type { ConsoleMode } from './mode.ts';
import type { Keys } from './session.ts';
import type { SignIn } from './sign-in.ts';

export interface ConsoleDeps {
  actions: TaskActions;
  mode: ConsoleMode;
  /** The deployment's links: its origin (forms must come from it), the callback and task pages. Its base URL must be known. */
  links: DeploymentLinks;
  keys: Keys;
  config: Pick<TaskSettings, 'retentionMs' | 'pollIntervalMs' | 'maxPollIntervalMs' | 'maxInputWaitMs'>;
  /** The deployment publishes lifecycle events: a task's page lists those its row implies. */
  events?: boolean;
  /** Who may decide questions for a person of tasks they do not own (`TASKS_APPROVERS`). */
  approvers: Approvers;
  /** The open endpoint's one principal: whose tasks an open console shows. */
  localPrincipal: string;
  /** Where sign-outs are recorded and read (the task store). */
  signOutRecords: SignOutStore;
  /** Where the names people sign in with are recorded and read, for "who asks" (the task store). */
  signInNameRecords: SignInNameStore;
  /** The sign-in, in `sign-in` mode. */
  signIn?: SignIn;
  log: Log;
  now: () => number;
}
