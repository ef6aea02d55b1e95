/**
 * The frame of every console page: head (with the page's one style sheet,
 * under the CSP nonce), a header saying whose tasks these are and how the
 * console is reached (open, by id, signed in), and the page's body.
 * Rendered by Hono's JSX renderer: every value is escaped unless passed
 * through `raw`, which only the project's own constants are.
 */
import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { ConsoleMode } from '../mode.ts';
import type { Session } from '../session.ts';

/** What the frame shows besides the body. */
export interface Frame {
  title: string;
  nonce: string | undefined;
  mode: ConsoleMode;
  session: Session | undefined;
  /** The session's form token, for the sign-out form. */
  children?: Child;
}

const STYLE = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 62rem; padding: 0 1rem 3rem; color: #1b1b1b; }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: baseline; border-bottom: 1px solid #ccc; padding: .75rem 0; }
header p { margin: 0; color: #444; flex: 1 1 20rem; }
header form { margin: 0; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e4e4e4; vertical-align: top; }
pre { background: #f5f5f5; padding: .6rem; overflow: auto; white-space: pre-wrap; word-break: break-word; max-height: 30rem; }
.waiting { background: #fff3c4; padding: 0 .3rem; border-radius: .2rem; }
.status { font-weight: 600; }
.problems { color: #8a1111; }
label, fieldset { display: block; margin: .6rem 0; }
fieldset label { display: inline-block; margin-right: 1rem; }
small { display: block; color: #555; }
section { margin: 1.25rem 0; }
img { max-width: 100%; }
`;

/** The page frame. */
export function Layout(props: Frame) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title} · MCP tasks</title>
        <style nonce={props.nonce}>{raw(STYLE)}</style>
      </head>
      <body>
        <header>
          <strong>
            <a href="/console">MCP tasks</a>
          </strong>
          <p id="reach">{reach(props.mode, props.session)}</p>
          {props.session?.kind === 'person' ? (
            <form method="post" action="/console/sign-out">
              <input type="hidden" name="token" value={props.session.formToken} />
              <button type="submit">Sign out</button>
            </form>
          ) : null}
        </header>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

/** Who sees these tasks, in one sentence: the page says which rule applies. */
function reach(mode: ConsoleMode, session: Session | undefined): string {
  switch (mode.kind) {
    case 'sign-in':
      return session?.kind === 'person' ? `Signed in as ${session.name ?? 'you'}: your tasks.` : 'Sign in to see your tasks.';
    case 'open':
      return 'Open console: this endpoint has no sign-in, so anyone who can reach it sees and acts on every task here.';
    case 'by-id':
      return (
        'This endpoint is open (no sign-in): a task is reachable by its id only, as tasks/get reads it, and there is no list ' +
        '(an operator turns the list on with -c console=open).'
      );
    case 'off':
      return 'This endpoint requires sign-in, and the console has none configured: it shows no task (see the console docs).';
  }
}
