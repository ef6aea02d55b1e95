/**
 * Server-side sign-out: "Sign out" records, for the person, that their
 * sessions started until now are over (one write to the task table,
 * `SignOutStore`, kept as long as the longest session lasts), and the console
 * refuses such sessions on every device: a copied cookie stops working too.
 * Each console request reads the record at most once, eventually
 * consistent, and a warm function keeps what it read for
 * {@link SIGN_OUT_CACHE_MS}: a sign-out is seen everywhere within that window
 * (at once by the function that recorded it).
 */
import type { SignOutStore } from '../tasks/sign-outs-store.ts';
import { SESSION_SECONDS, type Session } from './session.ts';

/** How long a function trusts what it read of a principal's sign-out. */
export const SIGN_OUT_CACHE_MS = 30_000;

/** Principals remembered per warm function (the oldest read is dropped past it). */
const CACHED_PRINCIPALS = 1_000;

export interface SignOuts {
  /** Whether `session` was ended by a sign-out (at most one read, cached). */
  ended(session: Session): Promise<boolean>;
  /** Ends every session of `principal` started until now. One write. */
  signOut(principal: string): Promise<void>;
}

export function signOuts(store: SignOutStore, now: () => number): SignOuts {
  const cache = new Map<string, { after: number | undefined; readAt: number }>();
  const remember = (principal: string, after: number | undefined, readAt: number) => {
    cache.delete(principal);
    cache.set(principal, { after, readAt });
    if (cache.size > CACHED_PRINCIPALS) cache.delete(cache.keys().next().value!);
  };
  const after = async (principal: string) => {
    const at = now();
    const known = cache.get(principal);
    if (known && at - known.readAt < SIGN_OUT_CACHE_MS) return known.after;
    const read = await store.signedOutAfter(principal, at);
    remember(principal, read, at);
    return read;
  };
  return {
    async ended(session) {
      const signedOutAfter = await after(session.principal);
      // A session that says nothing of when it started is as old as any.
      return signedOutAfter !== undefined && (session.startedAt ?? 0) <= signedOutAfter;
    },
    async signOut(principal) {
      const at = now();
      await store.recordSignOut(principal, at, at + SESSION_SECONDS * 1000);
      remember(principal, at, at);
    },
  };
}
