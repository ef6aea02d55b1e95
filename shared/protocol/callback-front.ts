/**
 * The completion endpoint: `POST /callbacks/<token>` on the same API as
 * `/mcp`, with no principal (the token is the capability, as a Step
 * Functions task token is). The body is `{"result": …}`, `{"error":
 * {"message": …}}` or `{"heartbeat": true}`.
 *
 * Every refusal changes nothing and answers a status of its own: 405 (with
 * `Allow: POST`) for another method, 404 for a token we did not seal
 * (malformed, altered, forged, or one of ours spelled otherwise) or a task that is gone,
 * 410 once the task has ended or the token has expired, 413 for a payload
 * over {@link MAX_CALLBACK_BYTES}, 400 for a malformed body, 409 when the
 * callback was settled by another completion. The first completion wins (a
 * conditional write); the same completion again answers 200 without effect.
 * A completion is recorded and resumes its task through the task actions, so
 * it follows their one resume rule: once recorded, it answers 200 even if the
 * task could not be queued (the sweeper resumes it). The token is never
 * logged: log lines carry the task and callback ids.
 */

import type { TaskActions } from '../actions/task-actions.ts';
import { type CallbackKeys, unsealCallback } from '../callback-tokens.ts';
import { nestsDeeperThan } from '../json-depth.ts';
import type { Log } from '../log.ts';
import { MAX_CALLBACK_BYTES } from '../tasks/callbacks-decisions.ts';
import type { CompletionResult, HeartbeatResult, PostedCompletion } from '../tasks/callbacks-model.ts';
import { LimitExceededError } from '../tasks/limits.ts';
import { TaskRowRejectedError } from '../tasks/store-errors.ts';

export interface CallbackFrontDeps {
  actions: Pick<TaskActions, 'completeCallback' | 'beatCallback'>;
  keys: CallbackKeys;
  log: Log;
  now?: () => number;
}

/** A request as the front reads it: the method, the token (the path's last segment) and the body text. */
export interface CallbackRequest {
  method: string;
  token: string | undefined;
  body: string;
}

export interface CallbackAnswer {
  status: number;
  /** Headers of this answer besides the content type (a 405's `Allow`). */
  headers?: Record<string, string>;
  body: { status: string; message?: string };
}

/** What a method other than POST is answered: 405, naming the one method allowed. */
const METHOD_NOT_ALLOWED: CallbackAnswer = {
  status: 405,
  headers: { allow: 'POST' },
  body: { status: 'method-not-allowed', message: 'POST a completion or a heartbeat' },
};

/** The largest body read: the payload's limit plus room for the envelope. */
const MAX_BODY_BYTES = MAX_CALLBACK_BYTES + 1024;

/** The longest error message recorded. */
const MAX_ERROR_MESSAGE = 1024;

const STATUS_OF: Record<CompletionResult | HeartbeatResult, CallbackAnswer> = {
  accepted: { status: 200, body: { status: 'accepted' } },
  resumed: { status: 200, body: { status: 'accepted' } },
  duplicate: { status: 200, body: { status: 'duplicate', message: 'This completion was recorded before; nothing changed' } },
  recorded: { status: 200, body: { status: 'alive' } },
  skipped: { status: 200, body: { status: 'alive' } },
  conflict: { status: 409, body: { status: 'conflict', message: 'The callback was already completed otherwise' } },
  settled: { status: 409, body: { status: 'conflict', message: 'The callback was already completed' } },
  ended: { status: 410, body: { status: 'ended', message: 'The task has ended' } },
  expired: { status: 410, body: { status: 'expired', message: 'The callback has expired' } },
  unknown: { status: 404, body: { status: 'unknown', message: 'No such callback' } },
};

function refusal(status: number, state: string, message: string): CallbackAnswer {
  return { status, body: { status: state, message } };
}

export function callbackFront(deps: CallbackFrontDeps): (request: CallbackRequest) => Promise<CallbackAnswer> {
  const now = deps.now ?? Date.now;
  return async ({ method, token, body }) => {
    if (method !== 'POST') return METHOD_NOT_ALLOWED;
    if (Buffer.byteLength(body) > MAX_BODY_BYTES) return tooLarge(deps.log, undefined);
    const grant = token === undefined ? undefined : await unsealCallback(deps.keys, token);
    if (!grant) {
      deps.log({ event: 'callback-refused', reason: 'unknown' });
      return STATUS_OF.unknown;
    }
    const ids = { taskId: grant.taskId, callbackId: grant.callbackId };
    if (grant.expiresAt <= now()) {
      deps.log({ event: 'callback-refused', ...ids, reason: 'expired' });
      return STATUS_OF.expired;
    }
    const parsed = parse(body);
    if ('problem' in parsed) {
      deps.log({ event: 'callback-refused', ...ids, reason: 'malformed' });
      return refusal(400, 'malformed', parsed.problem);
    }
    if ('heartbeat' in parsed) return answer(deps, ids, 'heartbeat', await deps.actions.beatCallback(grant.taskId, grant.callbackId));
    const bytes = Buffer.byteLength(JSON.stringify('result' in parsed ? parsed.result : parsed.error));
    if (bytes > MAX_CALLBACK_BYTES) return tooLarge(deps.log, ids);
    let result: CompletionResult;
    try {
      result = await deps.actions.completeCallback(grant.taskId, grant.callbackId, parsed);
    } catch (error) {
      if (error instanceof LimitExceededError) return tooLarge(deps.log, ids, error.message);
      // The row cannot take it (its arguments, answers and completions together at DynamoDB's item limit).
      if (error instanceof TaskRowRejectedError) return tooLarge(deps.log, ids, 'The task has no room left for this completion');
      throw error;
    }
    return answer(deps, ids, 'result' in parsed ? 'result' : 'error', result);
  };
}

function answer(
  deps: CallbackFrontDeps,
  ids: { taskId: string; callbackId: string },
  kind: string,
  result: CompletionResult | HeartbeatResult,
): CallbackAnswer {
  const answered = STATUS_OF[result];
  deps.log({ event: answered.status < 300 ? 'callback-completed' : 'callback-refused', ...ids, kind, reason: result });
  return answered;
}

function tooLarge(log: Log, ids: { taskId: string; callbackId: string } | undefined, message?: string): CallbackAnswer {
  log({ event: 'callback-refused', ...ids, reason: 'too-large' });
  return refusal(413, 'too-large', message ?? `A callback's payload may be at most ${MAX_CALLBACK_BYTES} bytes`);
}

/** The posted completion, a heartbeat, or what is wrong with the body. */
function parse(body: string): PostedCompletion | { heartbeat: true } | { problem: string } {
  const problem = parsed(body);
  return typeof problem === 'string' ? { problem } : problem;
}

function parsed(body: string): PostedCompletion | { heartbeat: true } | string {
  if (nestsDeeperThan(body)) return 'The body nests too deep';
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return 'The body must be JSON: {"result": …}, {"error": {"message": …}} or {"heartbeat": true}';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'The body must be a JSON object';
  const keys = Object.keys(value);
  const fields = value as Record<string, unknown>;
  if (keys.length !== 1) return 'The body must have exactly one of "result", "error" and "heartbeat"';
  if (keys[0] === 'heartbeat') return fields['heartbeat'] === true ? { heartbeat: true } : '"heartbeat" must be true';
  if (keys[0] === 'result') return { result: fields['result'] };
  if (keys[0] !== 'error') return 'The body must have exactly one of "result", "error" and "heartbeat"';
  const error = fields['error'] as Record<string, unknown> | null;
  if (typeof error !== 'object' || error === null || typeof error['message'] !== 'string')
    return '"error" must be an object with a string "message"';
  if (error['message'].length > MAX_ERROR_MESSAGE) return `"error.message" may be at most ${MAX_ERROR_MESSAGE} characters`;
  if (error['code'] !== undefined && typeof error['code'] !== 'string') return '"error.code" must be a string';
  return {
    error: {
      message: error['message'],
      ...(error['code'] === undefined ? {} : { code: error['code'] }),
      ...(error['data'] === undefined ? {} : { data: error['data'] }),
    },
  };
}
