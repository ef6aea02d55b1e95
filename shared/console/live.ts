/**
 * What the console's live routes answer, read by the page's script
 * (`client/`): plain data, text and nodes the server drew. Neither DOM nor
 * Node here: both the function and the browser bundle import it.
 */
import type { TaskStatus } from '../tasks/model.ts';
import type { UiNode } from './nodes.ts';

/** A task page's live state. */
export interface LiveView {
  status: TaskStatus;
  /** The status in words with its badge, and the status message. */
  statusNodes: UiNode[];
  /** When the task last changed. */
  updatedNodes: UiNode[];
  /** Who decided each question for a person (list items). */
  decisionNodes: UiNode[];
  /** The timeline: its picture and its list (`timeline.ts`); absent where the page shows none. */
  timelineNodes?: UiNode[];
  /** When to read again (the task's poll interval, as `tasks/get` advertises it). */
  pollIntervalMs: number;
  /** The keys of the open questions. */
  questions: string[];
  cancelRequested: boolean;
  /** The result, drawn (`blocks.ts`): the page's script only builds these nodes. */
  result?: { isError: boolean; note?: string; nodes: UiNode[] };
  error?: { code: number; message: string };
  /** Nothing more for this viewer here (an approver's question decided elsewhere): stop reading. */
  over?: true;
}

/** A list page's live rows: each table body's rows by its id. */
export interface LiveList {
  pollIntervalMs: number;
  rows: Record<string, UiNode[]>;
}
