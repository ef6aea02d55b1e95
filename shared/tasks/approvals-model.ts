/**
 * The types of questions for a person that the store port names: who decides
 * on a page, what an in-band answer does, and the refusal of a decision the
 * rules do not allow (see `approvals-decisions.ts`).
 */
import { ClientError } from '../errors.ts';
import type { TaskRecord } from './model.ts';

/** Who decides on a task's page. */
export interface Decider {
  principal: string;
  /** What the page calls them. */
  name?: string;
  /** Whether the deployment's approvers rule admits them (see `shared/auth/approvers.ts`). */
  approver: boolean;
}

/**
 * What an in-band answer (`tasks/update`) does to a question for a person:
 * `record` takes it as the owner's decision (a form their client showed);
 * `ignore` leaves the question open (it was offered as a URL to decide on
 * the page, and the client's accept, decline or cancel decides nothing).
 * Either way a question that needs another approver is refused.
 */
export type InBandPersonAnswers = 'record' | 'ignore';

/** Options of `TaskStore.answer`. */
export interface AnswerOptions {
  /** Default: `record`. */
  person?: InBandPersonAnswers;
  /** What to call the owner in a decision recorded here (the subject of their principal). */
  name?: string;
}

/** A decision the rules refuse: nothing is recorded, the question stays open. */
export class DecisionRefusedError extends ClientError {
  constructor(
    readonly reason: 'four-eyes' | 'not-for-approvers',
    readonly keys: string[],
  ) {
    super(
      reason === 'four-eyes'
        ? `Question ${keys.map((key) => `"${key}"`).join(', ')} must be decided by an approver other than the task's caller, on the task's page; nothing was recorded`
        : `Question ${keys.map((key) => `"${key}"`).join(', ')} is not for a person: only the task's caller answers it; nothing was recorded`,
      { data: { reason, keys } },
    );
    this.name = 'DecisionRefusedError';
  }
}

/** A question for a person waiting for a decision: its task (as an approver may see it, see `approverView`) and its key. */
export interface WaitingQuestion {
  task: TaskRecord;
  key: string;
}

/** A page of {@link WaitingQuestion}s, oldest first; `next` is the cursor of the following page. */
export interface WaitingPage {
  questions: WaitingQuestion[];
  next?: string;
}
