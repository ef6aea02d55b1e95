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
:root { color-scheme: light; --ink: #1a1a1a; --muted: #4a4a4a; --line: #d4d4d4; --soft: #f4f4f4; --accent: #0b57d0; --bad: #a50e0e; }
* { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 64rem; padding: 0 1rem 3rem; color: var(--ink); background: #fff; overflow-wrap: anywhere; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; border-bottom: 1px solid var(--line); padding: .5rem 0; }
header p { margin: 0; color: var(--muted); flex: 1 1 18rem; font-size: .95rem; }
header form { margin: 0; }
header strong a { display: inline-flex; align-items: center; min-height: 44px; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 1rem 0 .5rem; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1.05rem; margin: 0 0 .5rem; }
.crumbs { margin: .75rem 0 0; }
.crumbs a, .paging a, .chip { display: inline-flex; align-items: center; min-height: 44px; padding: 0 .25rem; }
button, .chip { font: inherit; min-height: 44px; min-width: 44px; padding: .5rem 1rem; border-radius: .4rem; border: 1px solid #767676; background: #fff; color: var(--ink); cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { background: var(--bad); border-color: var(--bad); color: #fff; }
input, select, textarea { font: inherit; min-height: 44px; width: 100%; max-width: 32rem; padding: .5rem; border: 1px solid #767676; border-radius: .4rem; background: #fff; color: var(--ink); }
input[type="radio"], input[type="checkbox"] { width: 1.4rem; height: 1.4rem; min-height: 0; margin: 0 .5rem 0 0; }
textarea { min-height: 5rem; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
label.choice { display: flex; align-items: center; font-weight: 400; min-height: 44px; margin: 0; }
fieldset { border: 1px solid var(--line); border-radius: .4rem; margin: .75rem 0; padding: .5rem .75rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.hint, small { display: block; color: var(--muted); font-size: .9rem; font-weight: 400; }
.required { color: var(--muted); font-weight: 400; }
.field.invalid input, .field.invalid select, .field.invalid textarea, .field.invalid fieldset { border: 2px solid var(--bad); }
.field-problem, .problems { color: var(--bad); font-weight: 600; }
.problems { border-left: 4px solid var(--bad); padding: .25rem .75rem; margin: .5rem 0; }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; margin-top: 1rem; }
.card { border: 1px solid var(--line); border-radius: .6rem; padding: 1rem; margin: 1rem 0; }
.card.approval { border: 2px solid var(--accent); }
.badge { display: inline-block; padding: .1rem .6rem; border-radius: 1rem; font-weight: 600; font-size: .9rem; border: 1px solid; }
.badge-running { background: #e8f0fe; color: #0b3d91; }
.badge-waiting { background: #fff4ce; color: #5c3b00; }
.badge-done { background: #e6f4ea; color: #0d5323; }
.badge-error, .badge-failed, .badge-rejected { background: #fce8e6; color: #8c1d18; }
.badge-cancelled { background: #eee; color: #3c3c3c; }
.status-line { font-size: 1.05rem; }
#timeline svg.tl-picture { display: block; width: 100%; max-width: 30rem; height: auto; margin: .5rem 0; }
.tl-words { font: 12px system-ui, -apple-system, "Segoe UI", sans-serif; fill: var(--ink); }
.tl-axis { stroke: var(--line); stroke-width: 1; }
.tl-bar { fill: #5f6368; }
.tl-queued { fill: #9aa0a6; }
.tl-run { fill: #0b57d0; }
.tl-wait-person, .tl-wait-client { fill: #b06000; }
.tl-wait-callback, .tl-wait-workflow, .tl-wait-sleep { fill: #7b1fa2; }
.tl-retry, .tl-recovered { fill: #a50e0e; }
.tl-open { opacity: .6; }
.tl-list { padding-left: 1.25rem; }
.note { background: var(--soft); border-left: 4px solid var(--line); padding: .5rem .75rem; }
.live-state:empty { display: none; }
dl.facts, dl.rows { display: grid; grid-template-columns: minmax(7rem, max-content) 1fr; gap: .25rem 1rem; margin: .5rem 0; }
dl.facts dt, dl.rows dt { color: var(--muted); }
dl.facts dd, dl.rows dd { margin: 0; min-width: 0; }
code { font-size: .9rem; background: var(--soft); padding: 0 .25rem; border-radius: .25rem; }
pre { background: var(--soft); padding: .6rem; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 30rem; font-size: .9rem; }
p.text { white-space: pre-wrap; }
details.raw summary, details summary { min-height: 44px; display: flex; align-items: center; cursor: pointer; color: var(--accent); }
figure { margin: .75rem 0; }
figcaption { font-weight: 600; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td a { display: inline-flex; align-items: center; min-height: 44px; font-weight: 600; }
.summary { margin-top: -.25rem; }
.filters nav { display: flex; flex-wrap: wrap; gap: .5rem; margin: .5rem 0; }
.chip { text-decoration: none; border-color: var(--line); }
.chip[aria-current="page"] { background: var(--ink); color: #fff; border-color: var(--ink); }
.filters form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
.filters form label { flex-basis: 100%; margin-bottom: 0; }
.filters form input { flex: 1 1 12rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
section { margin: 1.25rem 0; }
img { max-width: 100%; height: auto; }
@media (max-width: 40rem) {
  body { padding: 0 .75rem 2rem; }
  table.cards thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; }
  table.cards tr { border: 1px solid var(--line); border-radius: .6rem; margin: 0 0 .75rem; padding: .25rem .5rem; }
  table.cards td { border: 0; padding: .25rem 0; }
  table.cards td[data-label]::before { content: attr(data-label); display: block; color: var(--muted); font-size: .85rem; }
  dl.facts, dl.rows { grid-template-columns: 1fr; }
  dl.facts dd, dl.rows dd { margin-bottom: .5rem; }
}
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
