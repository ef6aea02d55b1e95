/**
 * What the console shows of a task, as plain data: the pages render it
 * (escaped by the JSX renderer) and the live route sends it to the page's
 * script (which sets it with `textContent` and attributes only). Everything a
 * task carries is untrusted: arguments, messages, questions, steps, results.
 * Here it is sorted into text, and into the two things that become
 * attributes: links, which must be `http:` or `https:`, and media, which
 * must be base64 `data:` URLs of an image or audio type (anything else is
 * shown as text).
 */
import type { TaskSettings } from '../config.ts';
import { taskPagePath } from '../links.ts';
import { pollIntervalMs } from '../protocol/render.ts';
import { type Decision, isTerminal, type TaskRecord } from '../tasks/model.ts';
import { approversTimeline, timelineOf } from '../tasks/timeline.ts';
import { NOT_DELIVERED_MESSAGE } from '../tasks/workflows-model.ts';
import { type Block, type ResultView, resultNodes } from './blocks.ts';
import type { LiveView } from './live.ts';
import { el, type UiNode } from './nodes.ts';
import { timelineNodes } from './timeline.ts';
import { type Badge, latestLine, statusBadge, statusWords, timeNode, type Viewer } from './words.ts';

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp']);
const AUDIO_TYPES = new Set(['audio/mpeg', 'audio/wav', 'audio/x-wav', 'audio/ogg', 'audio/webm', 'audio/aac', 'audio/flac', 'audio/mp4']);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** `target` as a link's `href` when it is an `http:` or `https:` URL; `undefined` for anything else (`javascript:`, `data:`, relative). */
export function safeHref(target: unknown): string | undefined {
  if (typeof target !== 'string' || !URL.canParse(target)) return undefined;
  const url = new URL(target);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
}

/** A `data:` URL for base64 `data` of `mimeType`, when that is an image (or audio) type the page shows; else `undefined`. */
export function mediaSrc(kind: 'image' | 'audio', mimeType: unknown, data: unknown): string | undefined {
  const types = kind === 'image' ? IMAGE_TYPES : AUDIO_TYPES;
  if (typeof mimeType !== 'string' || !types.has(mimeType.toLowerCase())) return undefined;
  if (typeof data !== 'string' || !BASE64.test(data)) return undefined;
  return `data:${mimeType.toLowerCase()};base64,${data}`;
}

/** `value` as indented JSON, for the page (arguments, steps, structured content). */
function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** A tool's result as the page shows it: each content item, then the structured content. */
export function resultView(result: Record<string, unknown>): ResultView {
  const content = Array.isArray(result['content']) ? (result['content'] as unknown[]) : [];
  const blocks = content.map(contentBlock);
  if (result['structuredContent'] !== undefined) {
    blocks.push({ kind: 'value', label: 'Details', value: result['structuredContent'] });
  }
  return { isError: result['isError'] === true, blocks };
}

function contentBlock(item: unknown): Block {
  const entry = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  switch (entry['type']) {
    case 'text':
      return { kind: 'text', text: text(entry['text']) };
    case 'image':
    case 'audio': {
      const kind = entry['type'];
      const src = mediaSrc(kind, entry['mimeType'], entry['data']);
      if (src) return kind === 'image' ? { kind, src, alt: `Image (${text(entry['mimeType'])})` } : { kind, src };
      return { kind: 'text', text: `[${kind} of type ${text(entry['mimeType']) || 'unknown'}: not shown]` };
    }
    case 'resource_link':
      return link(text(entry['title']) || text(entry['name']) || text(entry['uri']), entry['uri']);
    case 'resource': {
      const resource = (entry['resource'] ?? {}) as Record<string, unknown>;
      if (typeof resource['text'] === 'string') return { kind: 'json', label: text(resource['uri']) || 'Resource', text: resource['text'] };
      return link(text(resource['uri']) || 'Resource', resource['uri']);
    }
    default:
      return { kind: 'json', label: 'Content', text: jsonText(item) };
  }
}

function link(label: string, target: unknown): Block {
  const href = safeHref(target);
  return { kind: 'link', text: label, target: typeof target === 'string' ? target : '', ...(href ? { href } : {}) };
}

/**
 * A status message as the task's own page shows it: the link to that very
 * page, which a wait on a person's answer names for whoever reads the
 * status elsewhere ("… on the task's page: <its URL>"), reads "this page".
 */
export function onItsOwnPage(message: string | undefined, taskId: string): string | undefined {
  if (message === undefined) return undefined;
  const path = taskPagePath(taskId).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const self = `https?://\\S*?${path}(?![\\w%/-])`;
  return message.replace(new RegExp(`on the task's page: ${self}`, 'g'), 'on this page').replace(new RegExp(self, 'g'), 'this page');
}

/** The live state of a task, for the page's script, as `viewer` sees it. */
export function liveView(
  task: TaskRecord,
  now: number,
  config: Pick<TaskSettings, 'retentionMs' | 'pollIntervalMs' | 'maxPollIntervalMs'>,
  viewer: Viewer,
): LiveView {
  const message = onItsOwnPage(latestLine(task), task.taskId);
  return {
    status: task.status,
    statusNodes: [statusBadge(task, viewer), ' ', el('span', { id: 'status-message' }, message ?? '')],
    updatedNodes: [timeNode(task.lastUpdatedAt, now)],
    decisionNodes: decisionNodes(task.decisions, now),
    timelineNodes: timelineNodes(
      viewer.principal === task.owner ? timelineOf(task, now) : approversTimeline(timelineOf(task, now), viewer.principal),
      now,
    ),
    pollIntervalMs: pollIntervalMs(task, { now, config }),
    questions: task.status === 'input_required' ? Object.keys(task.inputRequests) : [],
    cancelRequested: task.cancelRequested && !isTerminal(task.status),
    ...(task.status === 'completed' ? { result: drawn(resultView(task.result), statusWords(task, viewer).badge) } : {}),
    ...(task.status === 'failed' ? { error: { code: task.error.code, message: task.error.message } } : {}),
  };
}

/** What a result's note says above it: nothing when done, else why it reads as it does. */
const NOTES: Partial<Record<Badge, string>> = {
  error: 'The tool ended with an error: what it said is below.',
  rejected: 'Not approved: the task did not go ahead. Who decided, and why, is below.',
};

function drawn(view: ResultView, badge: Badge): NonNullable<LiveView['result']> {
  const note = NOTES[badge];
  return { isError: view.isError, ...(note ? { note } : {}), nodes: resultNodes(view) };
}

/** Who decided each question for a person, and when (never what they answered). */
export function decisionNodes(decisions: Record<string, Decision> | undefined, now: number): UiNode[] {
  return Object.entries(decisions ?? {}).map(([key, decision]) =>
    el(
      'li',
      { 'data-decision': key },
      el('strong', undefined, decision.name ?? decision.by),
      ` ${decision.as === 'approver' ? 'as an approver' : "as the task's caller"}, ${decision.via === 'page' ? 'on this page' : 'in their MCP client'}, `,
      timeNode(decision.at, now),
      ` (question "${key}")`,
      // The workflow restarted and did not ask it again: the decision went nowhere.
      ...(decision.notDelivered ? [el('strong', undefined, ` ${NOT_DELIVERED_MESSAGE}`)] : []),
    ),
  );
}
