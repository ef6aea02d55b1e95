/**
 * The sign-out part of the task store port ({@link TaskStore} extends it):
 * the console's record that a principal signed out, "signed out after
 * <time>", so that every session of theirs started until then is refused,
 * on whichever device it lives (sign out everywhere is this same write). An
 * item of its own kind in the task table, keyed by a hash of the principal,
 * kept until the longest session started before it has expired anyway.
 */
export interface SignOutStore {
  /**
   * Records that `principal`'s sessions started at or before `at` (epoch
   * ms) are over, kept until `keepUntil` (epoch ms). One write; a record of
   * a later sign-out is never moved back.
   */
  recordSignOut(principal: string, at: number, keepUntil: number): Promise<void>;

  /**
   * When `principal` last signed out (epoch ms), or `undefined` (never, or
   * the record's keep ran out at `now`). One eventually consistent read: a
   * sign-out may take a moment to be seen by every reader.
   */
  signedOutAfter(principal: string, now: number): Promise<number | undefined>;
}
