/**
 * The console's two cookies on a request: the session (made on the first
 * page of an open console, at sign-in otherwise) and the sign-in under way.
 * HttpOnly, SameSite=Lax, `Secure` with the `__Host-` prefix except on a
 * loopback URL (the local stack serves plain HTTP), bounded lifetimes.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { CookieOptions } from 'hono/utils/cookie';
import { sameMac } from '../keys.ts';
import type { DeploymentLinks } from '../links.ts';
import type { Decider } from '../tasks/approvals-model.ts';
import type { ConsoleMode } from './mode.ts';
import {
  type Keys,
  newFormToken,
  newSessionId,
  SESSION_SECONDS,
  type Session,
  SIGN_IN_SECONDS,
  type SignInState,
  seal,
  unseal,
} from './session.ts';
import type { SignOuts } from './sign-outs.ts';

/** What a console request carries through Hono. */
export type ConsoleEnv = { Variables: { session: Session | undefined; secureHeadersNonce: string } };

const SESSION_COOKIE = 'mcp-tasks-console';
const SIGN_IN_COOKIE = 'mcp-tasks-sign-in';

/** The session handling of a console. */
export interface ConsoleSessions {
  /** Reads the session (an open console gives a page's visitor one), as `c.get('session')`. */
  middleware: MiddlewareHandler<ConsoleEnv>;
  /** Starts `session` (a sign-in's), under a new session id. */
  start(c: Context<ConsoleEnv>, session: Session): Promise<void>;
  /** Ends the session: a person's on the server too, with every other session of theirs (one write), then the cookie. */
  end(c: Context<ConsoleEnv>): Promise<void>;
  /** Keeps a sign-in under way until its callback. */
  keepSignIn(c: Context<ConsoleEnv>, state: SignInState): Promise<void>;
  /** The sign-in under way, taken (its cookie removed). */
  takeSignIn(c: Context<ConsoleEnv>): Promise<SignInState | undefined>;
  /** Whose tasks this request may see: the signed-in person, an open console's one principal, or nobody. */
  principal(c: Context<ConsoleEnv>): string | undefined;
  /** Who decides on this request's pages: its principal, what the page calls them, and whether they are an approver. */
  decider(c: Context<ConsoleEnv>): Decider | undefined;
  /** Whether a posted form carries this session's form token. */
  tokenOk(c: Context<ConsoleEnv>, token: unknown): boolean;
}

export function consoleSessions(deps: {
  mode: ConsoleMode;
  links: DeploymentLinks;
  keys: Keys;
  localPrincipal: string;
  signOuts: SignOuts;
  now: () => number;
}): ConsoleSessions {
  const { mode, keys } = deps;
  const secure = !isLoopback(new URL(deps.links.origin!).hostname);
  const options = (seconds: number): CookieOptions => ({
    path: '/',
    httpOnly: true,
    sameSite: 'Lax',
    maxAge: seconds,
    ...(secure ? { secure: true, prefix: 'host' as const } : {}),
  });
  const prefix = secure ? { prefix: 'host' as const } : {};
  const open = mode.kind === 'open' || mode.kind === 'by-id';
  /** A session of the other mode (the deployment changed) is none. */
  const fits = (session: Session) =>
    open ? session.kind === 'open' && session.principal === deps.localPrincipal : session.kind === 'person';
  const start = async (c: Context<ConsoleEnv>, started: Session) => {
    const session: Session = { ...started, sid: newSessionId(), startedAt: deps.now() };
    setCookie(c, SESSION_COOKIE, await seal(keys, 'console-session', session, SESSION_SECONDS), options(SESSION_SECONDS));
    c.set('session', session);
  };
  return {
    middleware: async (c, next) => {
      let session = await unseal(keys, 'console-session', getCookie(c, SESSION_COOKIE, prefix.prefix));
      if (session && !fits(session)) session = undefined;
      // A person's session ended by a sign-out (on any device) is none: its cookie goes too.
      if (session?.kind === 'person' && (await deps.signOuts.ended(session))) {
        session = undefined;
        deleteCookie(c, SESSION_COOKIE, options(0));
      }
      c.set('session', session);
      // An open console's visitor gets a session (and so a form token) with the first page.
      if (!session && open && c.req.method === 'GET')
        await start(c, { kind: 'open', principal: deps.localPrincipal, formToken: newFormToken() });
      await next();
    },
    start,
    end: async (c) => {
      const session = c.get('session');
      if (session?.kind === 'person') await deps.signOuts.signOut(session.principal);
      deleteCookie(c, SESSION_COOKIE, options(0));
      c.set('session', undefined);
    },
    keepSignIn: async (c, state) => {
      setCookie(c, SIGN_IN_COOKIE, await seal(keys, 'console-sign-in', state, SIGN_IN_SECONDS), options(SIGN_IN_SECONDS));
    },
    takeSignIn: async (c) => {
      const state = await unseal(keys, 'console-sign-in', getCookie(c, SIGN_IN_COOKIE, prefix.prefix));
      deleteCookie(c, SIGN_IN_COOKIE, options(0));
      return state;
    },
    principal: (c) => {
      if (mode.kind === 'off') return undefined;
      if (open) return deps.localPrincipal;
      const session = c.get('session');
      return session?.kind === 'person' ? session.principal : undefined;
    },
    decider: (c) => {
      const principal = open ? deps.localPrincipal : c.get('session')?.kind === 'person' ? c.get('session')?.principal : undefined;
      if (mode.kind === 'off' || principal === undefined) return undefined;
      const session = c.get('session');
      return { principal, ...(session?.name === undefined ? {} : { name: session.name }), approver: session?.approver === true };
    },
    tokenOk: (c, token) => {
      const session = c.get('session');
      return session !== undefined && typeof token === 'string' && sameMac(token, session.formToken);
    },
  };
}

function isLoopback(hostname: string): boolean {
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
}
