/**
 * A task's timeline as the task page draws it, as nodes (`nodes.ts`): a
 * picture (an SVG the server draws and the page's script redraws from the
 * same nodes, styled by the page's stylesheet through classes: no inline
 * style, so the page's CSP holds) and its text alternative, a list of the
 * same phases with their durations, shares and who decided what and when.
 *
 * The picture is a waterfall laid out for a phone: one row per phase, its
 * words above its bar, every bar on one time axis 360 units wide (about
 * the width of a 390 px screen), so it is read at its own size there.
 *
 * No DOM and no Node here: the page's script imports this module's output only.
 */
import { formatDuration } from '../durations.ts';
import { PHASE_WORDS } from '../tasks/phases.ts';
import type { Timeline, TimelineAnswer, TimelineArrival, TimelinePhase } from '../tasks/timeline.ts';
import { el, type UiNode } from './nodes.ts';
import { timeNode } from './words.ts';

/** The picture's width, in its own units. */
const WIDTH = 360;
/** One phase's row: its words, then its bar. */
const ROW = 34;
const BAR = 10;

function duration(ms: number): string {
  return formatDuration(ms, { approximate: true });
}

/** A phase's words: the vocabulary's, with the run's number. */
function phaseWords(phase: TimelinePhase): string {
  const words = PHASE_WORDS[phase.phase];
  return phase.run === undefined ? words : `${words} (run ${phase.run})`;
}

/** `Running (run 1): 1s 200ms, 40%` (and `, still going` for the open phase). */
function phaseLine(phase: TimelinePhase): string {
  return `${phaseWords(phase)}: ${duration(phase.ms)}, ${Math.round(phase.share * 100)}%${phase.open ? ', still going' : ''}`;
}

/** The class a phase's bar is drawn with (`tl-wait-person`, …). */
function barClass(phase: TimelinePhase): string {
  return `tl-bar tl-${phase.phase.replace(':', '-')}${phase.open ? ' tl-open' : ''}`;
}

/** The picture: one row per phase on one time axis. */
function picture(timeline: Timeline): UiNode {
  const scale = timeline.ms > 0 ? WIDTH / timeline.ms : 0;
  const rows = timeline.phases.map((phase, index) => {
    const top = index * ROW;
    const x = Math.min(WIDTH - 2, (phase.from - timeline.createdAt) * scale);
    const width = Math.max(2, Math.min(WIDTH - x, phase.ms * scale));
    return el(
      'g',
      { 'data-phase': phase.phase },
      el('text', { x: '0', y: String(top + 13), class: 'tl-words' }, phaseLine(phase)),
      el('rect', { x: x.toFixed(1), y: String(top + 18), width: width.toFixed(1), height: String(BAR), class: barClass(phase) }),
    );
  });
  const height = Math.max(1, timeline.phases.length) * ROW + 6;
  return el(
    'svg',
    {
      viewBox: `0 0 ${WIDTH} ${height}`,
      role: 'img',
      'aria-label': `Timeline: ${timeline.phases.length} phases, ${duration(timeline.ms)} in all. The list that follows says each.`,
      class: 'tl-picture',
    },
    el('line', { x1: '0', y1: String(height - 1), x2: String(WIDTH), y2: String(height - 1), class: 'tl-axis' }),
    ...rows,
  );
}

function answerLine(answer: TimelineAnswer, now: number): UiNode {
  return el(
    'li',
    undefined,
    `"${answer.key}" decided by `,
    el('strong', undefined, answer.name ?? answer.by),
    ` ${answer.as === 'approver' ? 'as an approver' : "as the task's caller"}, ${answer.via === 'page' ? 'on this page' : 'in their MCP client'}, `,
    timeNode(answer.at, now),
  );
}

function arrivalLine(arrival: TimelineArrival, now: number): UiNode {
  const what =
    arrival.id === 'workflow'
      ? `The workflow ended (${arrival.outcome}), `
      : arrival.outcome === 'question'
        ? 'The workflow asked a question, '
        : `Callback "${arrival.id}" posted ${arrival.outcome === 'error' ? 'an error' : 'its result'}, `;
  return el('li', undefined, what, timeNode(arrival.at, now));
}

/** The text alternative: the phases in order, each with its duration, share and start, and what happened in it. */
function list(timeline: Timeline, now: number): UiNode {
  const items = timeline.phases.map((phase) => {
    const details = [
      ...(phase.answers ?? []).map((answer) => answerLine(answer, now)),
      ...(phase.arrivals ?? []).map((arrival) => arrivalLine(arrival, now)),
      ...(phase.phase === 'recovered' ? [el('li', undefined, 'Its worker stopped; the next run took the task over.')] : []),
    ];
    return el(
      'li',
      { 'data-phase': phase.phase },
      `${phaseLine(phase)}, from +${duration(phase.from - timeline.createdAt)}`,
      details.length > 0 && el('ul', undefined, ...details),
    );
  });
  const end =
    timeline.endedAt === undefined ? [] : [el('li', { 'data-phase': 'end' }, `Ended ${timeline.status} at +${duration(timeline.ms)}`)];
  return el('ul', { id: 'timeline-list', class: 'tl-list' }, ...items, ...end);
}

/**
 * The timeline's nodes: the picture and the list, or a sentence where there
 * is nothing to draw (an approver who took part in no wait yet).
 */
export function timelineNodes(timeline: Timeline, now: number): UiNode[] {
  if (timeline.phases.length === 0) return [el('p', { class: 'note' }, 'Nothing to show yet.')];
  const note = timeline.recorded
    ? []
    : [el('p', { class: 'note' }, 'This task started before its moments were recorded: it shows as one phase.')];
  return [...note, picture(timeline), list(timeline, now)];
}
