/**
 * Signing in and out: `GET /console/sign-in?next=…` sends the person to the
 * issuer (the sign-in's state kept in a sealed cookie), `GET /console/callback`
 * takes the code back, checks state, nonce and PKCE, and starts the session
 * on the page they asked for (a checked same-origin path), `POST
 * /console/sign-out` ends it.
 */
import type { Context, Hono } from 'hono';
import { isApprover } from '../auth/approvers.ts';
import { errorName } from '../log.ts';
import type { ConsoleEnv, ConsoleSessions } from './cookies.ts';
import type { ConsoleDeps } from './deps.ts';
import { Message } from './pages/list.tsx';
import { newFormToken } from './session.ts';
import { type SignedIn, safeNext } from './sign-in.ts';
import { signInNames } from './sign-in-names.ts';

export function signInRoutes(app: Hono<ConsoleEnv>, deps: ConsoleDeps, sessions: ConsoleSessions): void {
  const { signIn, log } = deps;
  const names = signInNames(deps.signInNameRecords, deps);

  app.get('/sign-in', async (c) => {
    if (!signIn) return c.notFound();
    const { url, state } = await signIn.start(safeNext(c.req.query('next')));
    await sessions.keepSignIn(c, state);
    return c.redirect(url, 302);
  });

  app.get('/callback', async (c) => {
    if (!signIn) return c.notFound();
    const state = await sessions.takeSignIn(c);
    if (!state) {
      c.status(400);
      return c.render(<Message heading="Sign-in expired" text="This sign-in was not started here or took too long: start again." />, {
        title: 'Sign-in expired',
      });
    }
    let person: SignedIn;
    try {
      person = await signIn.finish(new URL(c.req.url).search, state);
    } catch (error) {
      // A refused or forged callback, or an issuer that could not be reached: the person starts again.
      log({ event: 'console-sign-in-failed', error: errorName(error) });
      c.status(400);
      return c.render(<Message heading="Sign-in failed" text="The identity provider did not confirm who you are. Try again." />, {
        title: 'Sign-in failed',
      });
    }
    const approver = isApprover(deps.approvers, person.claims);
    // What "who asks" calls them on their tasks, where a task keeps no name of its own.
    if (person.requester !== undefined) await names.record(person.principal, person.requester);
    await sessions.start(c, {
      kind: 'person',
      principal: person.principal,
      name: person.name,
      ...(person.requester === undefined ? {} : { requester: person.requester }),
      formToken: newFormToken(),
      ...(approver ? { approver } : {}),
    });
    log({ event: 'console-signed-in', approver });
    return c.redirect(state.next, 303);
  });

  app.post('/sign-out', async (c) => {
    const form = await c.req.parseBody();
    if (!sessions.tokenOk(c, form['token'])) return refused(c, deps);
    await sessions.end(c);
    log({ event: 'console-signed-out' });
    return c.render(
      <>
        <h1>Signed out</h1>
        <p>You are signed out of this console on every device and browser where you were signed in.</p>
        <p>
          <a href="/console/sign-in">Sign in again</a>
        </p>
      </>,
      { title: 'Signed out' },
    );
  });
}

/** A POST without this session's form token: refused, nothing changed. */
// biome-ignore lint/suspicious/noExplicitAny: any route's context (its path and input types differ)
export function refused(c: Context<ConsoleEnv, any, any>, deps: Pick<ConsoleDeps, 'log'>) {
  deps.log({ event: 'console-refused', reason: 'form-token' });
  c.status(403);
  return c.render(
    <Message
      heading="Refused"
      text="This form is not from your current session (it may be old): reload the page and try again. Nothing was changed."
    />,
    { title: 'Refused' },
  );
}
