/**
 * The runner's replay checks (`runTool` in `run.ts` states the rules): what
 * identifies a question, the index of the calls a task recorded, and the
 * decisions that fail a replay, each failure one {@link ReplayError}.
 */
import { canonicalJson } from '../canonical-json.ts';
import { TasksError } from '../errors.ts';
import type { InputRequest, JsonRpcErrorObject, QuestionRecord } from '../tasks/model.ts';
import { INTERNAL_ERROR } from '../wire.ts';

/** The durable calls a run makes, each taking the next position. */
export type CallKind = 'step' | 'sleep' | 'question';

/** Why a replay failed: see {@link ReplayError}. */
export type ReplayReason = 'divergence' | 'key-reused' | 'tool-version';

/**
 * `data.reason` of each failure on the wire. Failed task rows store it and
 * clients (and the `replay-failed` log line) read it, so these strings never change.
 */
export const REPLAY_WIRE_REASONS = {
  divergence: 'replay-divergence',
  'key-reused': 'input-key-reused',
  'tool-version': 'tool-version-changed',
} as const satisfies Record<ReplayReason, string>;

/** What a replay failure knows, by reason. */
export type ReplayDetails =
  /** A call reached a position recorded for another call (`why` says which), or a recorded call another position. */
  | { reason: 'divergence'; kind: CallKind; name: string; position: number; why: string }
  /** One key was used for two different questions. */
  | { reason: 'key-reused'; key: string }
  /** Recorded work would be replayed by another version of the tool. */
  | { reason: 'tool-version'; tool: string; recordedVersion: string; currentVersion: string | undefined };

/**
 * A replay that cannot go on: the handler no longer makes the calls it
 * recorded, in the same order, or is not the code that recorded them. The
 * task fails with {@link ReplayError.toJSON}, its JSON-RPC error (`-32603`,
 * a message naming the step or key, `data.reason` from {@link REPLAY_WIRE_REASONS}).
 */
export class ReplayError extends TasksError {
  /** Why the replay failed. */
  readonly reason: ReplayReason;

  constructor(readonly details: ReplayDetails) {
    super(messageOf(details));
    this.name = 'ReplayError';
    this.reason = details.reason;
  }

  /** `name` (a `kind`) reached at `position`, where `why` says what the journal holds. */
  static divergence(kind: CallKind, name: string, position: number, why: string): ReplayError {
    return new ReplayError({ reason: 'divergence', kind, name, position, why });
  }

  /** `key` asked again for another question. */
  static keyReused(key: string): ReplayError {
    return new ReplayError({ reason: 'key-reused', key });
  }

  /** The task recorded `recordedVersion` of `tool`, which now declares `currentVersion`. */
  static toolVersion(tool: string, recordedVersion: string, currentVersion: string | undefined): ReplayError {
    return new ReplayError({ reason: 'tool-version', tool, recordedVersion, currentVersion });
  }

  /** The error the task fails with, as stored on its row and returned to clients. */
  toJSON(): JsonRpcErrorObject {
    return { code: INTERNAL_ERROR, message: this.message, data: dataOf(this.details) };
  }
}

function messageOf(details: ReplayDetails): string {
  switch (details.reason) {
    case 'divergence': {
      const { kind, name, position, why } = details;
      const what = kind === 'question' ? `question "${name}"` : kind === 'sleep' ? `sleep "${name}"` : `step "${name}"`;
      return (
        `Replay diverged at ${what} (call #${position}): ${why}. The handler's steps, sleeps and questions must come in the same ` +
        `order on every run`
      );
    }
    case 'key-reused':
      return `Input key "${details.key}" was used for a different question (another method or requested schema): one key, one question`;
    case 'tool-version':
      return (
        `Tool "${details.tool}" changed from version ${details.recordedVersion} to ${details.currentVersion ?? '(none)'} while this ` +
        `task was in flight; its recorded work is not replayed by other code`
      );
  }
}

/** `data` on the wire; its keys keep their order (`reason` first), as rows stored before hold them. */
function dataOf(details: ReplayDetails): Record<string, unknown> {
  const reason = REPLAY_WIRE_REASONS[details.reason];
  switch (details.reason) {
    case 'divergence':
      return { reason, [details.kind === 'question' ? 'key' : 'step']: details.name, position: details.position };
    case 'key-reused':
      return { reason, key: details.key };
    case 'tool-version':
      return { reason, recordedVersion: details.recordedVersion, currentVersion: details.currentVersion ?? null };
  }
}

/**
 * What identifies a question besides its key: the request method and, for a
 * form, the requested schema (the message text may change between askings).
 */
export function fingerprintOf(request: InputRequest): string {
  const schema = request.method === 'elicitation/create' ? request.params?.['requestedSchema'] : undefined;
  return canonicalJson({ method: request.method, schema: schema ?? null });
}

/** The calls a task recorded, as the order checks and the replay-progress test read them. */
export interface RecordedCalls {
  /** Recorded calls by position. */
  byPosition: Map<number, { kind: CallKind; name: string }>;
  /** The highest recorded position (0 when none). */
  lastPosition: number;
  /** Steps recorded without a position (before positions existed). */
  unpositioned: Set<string>;
}

/**
 * Indexes the journal's steps and sleeps (when a journal is given and can
 * list them) and the recorded questions by position. Sleeps are told from
 * steps by their `sleep#n` names.
 */
export async function indexRecorded(
  journal: { entries?(): Promise<ReadonlyMap<string, { position?: number }>> } | undefined,
  questions: Record<string, QuestionRecord>,
): Promise<RecordedCalls> {
  const byPosition = new Map<number, { kind: CallKind; name: string }>();
  const unpositioned = new Set<string>();
  for (const [name, entry] of (await journal?.entries?.()) ?? []) {
    if (entry.position === undefined) unpositioned.add(name);
    else byPosition.set(entry.position, { kind: name.startsWith('sleep#') ? 'sleep' : 'step', name });
  }
  for (const [key, question] of Object.entries(questions)) byPosition.set(question.position, { kind: 'question', name: key });
  return { byPosition, lastPosition: Math.max(0, ...byPosition.keys()), unpositioned };
}

/**
 * The divergence, if any, of reaching `name` (a `kind`) at `position` for the
 * first time in a run, when the task recorded it at `recordedAt` (undefined:
 * not recorded, or recorded before positions existed, matched by name only).
 */
export function divergenceAt(
  recorded: RecordedCalls,
  kind: CallKind,
  name: string,
  position: number,
  recordedAt: number | undefined,
): ReplayError | undefined {
  const there = recorded.byPosition.get(position);
  if (there && (there.kind !== kind || there.name !== name))
    return ReplayError.divergence(kind, name, position, `the journal has ${describeCall(there.kind, there.name)} there`);
  if (recordedAt !== undefined && recordedAt !== position)
    return ReplayError.divergence(kind, name, position, `it was recorded as call #${recordedAt}`);
  return undefined;
}

/** The failure, if any, of replaying work recorded by `recordedVersion` with a tool that declares `currentVersion`. */
export function versionChange(
  tool: string,
  recordedVersion: string | undefined,
  currentVersion: string | undefined,
): ReplayError | undefined {
  return recordedVersion !== undefined && recordedVersion !== currentVersion
    ? ReplayError.toolVersion(tool, recordedVersion, currentVersion)
    : undefined;
}

/** The failure, if any, of asking `key` with `fingerprint` where `asked` was asked under it before. */
export function keyReuse(key: string, fingerprint: string, asked: QuestionRecord | undefined): ReplayError | undefined {
  return asked && asked.fingerprint !== fingerprint ? ReplayError.keyReused(key) : undefined;
}

function describeCall(kind: CallKind, name: string): string {
  return kind === 'question' ? `the question "${name}"` : kind === 'sleep' ? `a sleep ("${name}")` : `step "${name}"`;
}
