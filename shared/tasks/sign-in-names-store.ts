/**
 * The sign-in name part of the task store port ({@link TaskStore} extends
 * it): what a person was called at their last console sign-in (their ID
 * token's `name`, else `email`), so that the pages of a task whose row keeps
 * no name of its caller can still say who asks. An item of its own kind in
 * the task table, keyed by a hash of the principal, kept until the tasks the
 * sign-in's session may have started have expired anyway. Personal data: read
 * only for a task's page and `ops inspect`.
 */
export interface SignInNameStore {
  /**
   * Records that `principal` signed in at `at` (epoch ms) as `name`, kept
   * until `keepUntil` (epoch ms). One write; a record of a later sign-in is
   * never replaced by an earlier one's.
   */
  recordSignInName(principal: string, name: string, at: number, keepUntil: number): Promise<void>;

  /**
   * What `principal` was called at their last recorded sign-in, or
   * `undefined` (no sign-in recorded, or its keep ran out at `now`). One
   * eventually consistent read: a sign-in may take a moment to be seen.
   */
  signInNameOf(principal: string, now: number): Promise<string | undefined>;
}
