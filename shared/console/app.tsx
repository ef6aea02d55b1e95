/**
 * The console: server-rendered pages under `/console` on the endpoint's own
 * origin, for people to follow, answer and cancel their tasks. Built with
 * Hono: its JSX renderer (every value escaped unless the code says
 * otherwise), its secure-headers middleware (a strict Content-Security-Policy
 * whose only script and style carry the response's nonce, no framing) and
 * its body limit. Every request is `no-store`; every POST must come from this
 * origin (`Origin`, or `Sec-Fetch-Site: same-origin`), be a form, and carry
 * the session's form token.
 *
 * What it does to tasks goes through the task actions, as every surface's
 * does: the same read as `tasks/get` (another principal's task is the same
 * 404 as an unknown id), the same answer and cancel as `tasks/update` and
 * `tasks/cancel`, and answers checked against their question's schema.
 */
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { jsxRenderer } from 'hono/jsx-renderer';
import { NONCE, secureHeaders } from 'hono/secure-headers';
import { ClientError } from '../errors.ts';
import { CONSOLE_PATH } from '../links.ts';
import { errorName } from '../log.ts';
import { TaskNotFoundError } from '../tasks/store-errors.ts';
import { type ConsoleEnv, consoleSessions } from './cookies.ts';
import type { ConsoleDeps } from './deps.ts';
import { Layout } from './pages/layout.tsx';
import { Message, NotFound } from './pages/list.tsx';
import { signInRoutes } from './sign-in-routes.tsx';
import { signOuts } from './sign-outs.ts';
import { taskRoutes } from './task-routes.tsx';

/** What the console is built from. */

/** Largest body a console POST may have: a form's answers stay within the per-answer budget (64 KiB) with room for its encoding. */
const MAX_FORM_BYTES = 256 * 1024;

// What `c.render` takes: the page's body and its title (Hono's declaration merging).
declare module 'hono' {
  interface ContextRenderer {
    // biome-ignore lint/style/useShorthandFunctionType: an interface, to merge with Hono's own
    (content: string | Promise<string>, props: { title: string }): Response | Promise<Response>;
  }
}

/** The console as a Hono app (requests for paths outside `/console` are not its own: 404). */
export function createConsoleApp(deps: ConsoleDeps): Hono<ConsoleEnv> {
  if (!deps.links.origin) throw new Error('The console needs the deployment URL (TASKS_PUBLIC_URL)');
  const sessions = consoleSessions({ ...deps, signOuts: signOuts(deps.signOutRecords, deps.now) });
  const app = new Hono<ConsoleEnv>().basePath(CONSOLE_PATH);
  app.use(
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        scriptSrc: [NONCE],
        styleSrc: [NONCE],
        imgSrc: ['data:'],
        mediaSrc: ['data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
      xFrameOptions: 'DENY',
      referrerPolicy: 'no-referrer',
    }),
  );
  app.use(async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  });
  app.use(
    jsxRenderer(({ children, title }, c) => (
      <Layout title={title} nonce={c.get('secureHeadersNonce')} mode={deps.mode} session={c.get('session')}>
        {children}
      </Layout>
    )),
  );
  app.on('POST', '*', sameOrigin(deps), bodyLimit({ maxSize: MAX_FORM_BYTES, onError: (c) => tooLarge(c, deps) }), wellFormed(deps));
  app.use(sessions.middleware);
  signInRoutes(app, deps, sessions);
  taskRoutes(app, deps, sessions);
  app.notFound((c) => {
    c.status(404);
    return c.render(<NotFound />, { title: 'Not found' });
  });
  app.onError((error, c) => {
    if (error instanceof TaskNotFoundError) {
      c.status(404);
      return c.render(<NotFound />, { title: 'Not found' });
    }
    if (error instanceof ClientError) {
      c.status(400);
      return c.render(<Message heading="Not done" text={error.message} />, { title: 'Not done' });
    }
    deps.log({ event: 'console-error', error: errorName(error) });
    c.status(500);
    return c.render(<Message heading="Something went wrong" text="The console could not do this; try again later." />, { title: 'Error' });
  });
  return app;
}

/**
 * A POST comes from a page of this origin: its `Origin` is the deployment's,
 * or (a browser that sent none) `Sec-Fetch-Site` says same-origin; and it is
 * a form. Anything else is refused before the body is read.
 */
function sameOrigin(deps: ConsoleDeps) {
  return async (c: Context<ConsoleEnv>, next: () => Promise<void>) => {
    const origin = c.req.header('origin');
    const fromHere = origin === deps.links.origin || c.req.header('sec-fetch-site') === 'same-origin';
    const form = /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(c.req.header('content-type') ?? '');
    if (fromHere && form) return next();
    deps.log({ event: 'console-refused', reason: fromHere ? 'not-a-form' : 'cross-origin' });
    c.status(fromHere ? 415 : 403);
    return c.render(<Message heading="Refused" text="This request did not come from a form of this console. Nothing was changed." />, {
      title: 'Refused',
    });
  };
}

/**
 * A POST's form parses (a multipart body with no boundary, or cut short,
 * does not): read once here, before the session or anything else, and kept
 * for the route (Hono caches the parsed form). A malformed one is a 400
 * page, so no anonymous request can make the console answer 5xx.
 */
function wellFormed(deps: ConsoleDeps) {
  return async (c: Context<ConsoleEnv>, next: () => Promise<void>) => {
    try {
      await c.req.parseBody({ all: true });
    } catch (error) {
      // The platform's form parser throws a TypeError for a body that is no form of its type; anything else is no client's doing.
      if (!(error instanceof TypeError)) throw error;
      deps.log({ event: 'console-refused', reason: 'malformed-form', error: errorName(error) });
      c.status(400);
      return c.render(<Message heading="Not a form" text="This request's form could not be read. Nothing was changed." />, {
        title: 'Not a form',
      });
    }
    return next();
  };
}

function tooLarge(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  deps.log({ event: 'console-refused', reason: 'too-large' });
  c.status(413);
  return c.render(<Message heading="Too large" text={`A form may send at most ${MAX_FORM_BYTES} bytes. Nothing was changed.`} />, {
    title: 'Too large',
  });
}
