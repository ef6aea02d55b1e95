/**
 * Answers given outside a task-capable client (the fallback's `task_answer`,
 * and later a page's form): which open questions they answer, and whether
 * each fits its question, decided before anything is recorded. A task-capable
 * client's `tasks/update` carries results in the wire's own shape and is
 * recorded as sent.
 */

import { schemaMismatch } from '../runtime/json-schema.ts';
import { checkAnswers, LimitExceededError } from '../tasks/limits.ts';
import { forPersonOnly, type InputRequest } from '../tasks/model.ts';

/** The responses to record, or why nothing is. */
export type AnswerCheck =
  | { ok: true; responses: Record<string, unknown> }
  /** Keys of questions for a person only, which this channel may not answer. */
  | { ok: false; reason: 'person-only'; keys: string[] }
  /** No key given is an open question; `open` lists the open ones. */
  | { ok: false; reason: 'no-open-question'; open: string[] }
  /** Answers that do not fit their question, one sentence each. */
  | { ok: false; reason: 'mismatch'; problems: string[] }
  | { ok: false; reason: 'too-large'; message: string };

/**
 * Checks answers given as plain values against the open questions: a form's
 * answer is an object matching its requested schema (recorded as accepted
 * content), any other request's answer its result object. Keys that are not
 * open questions are ignored; with `personAllowed: false`, an answer to a
 * question for the person only refuses the whole set, so nothing is recorded.
 */
export function checkGivenAnswers(
  open: Readonly<Record<string, InputRequest>>,
  given: Record<string, unknown>,
  options: { personAllowed: boolean },
): AnswerCheck {
  const keys = Object.keys(given).filter((key) => Object.hasOwn(open, key));
  if (!options.personAllowed) {
    const personOnly = keys.filter((key) => forPersonOnly(open[key]!));
    if (personOnly.length > 0) return { ok: false, reason: 'person-only', keys: personOnly };
  }
  if (keys.length === 0) return { ok: false, reason: 'no-open-question', open: Object.keys(open) };
  const responses: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const key of keys) {
    const problem = mismatch(open[key]!, given[key]);
    if (problem) problems.push(`"${key}": ${problem}`);
    else responses[key] = open[key]!.method === 'elicitation/create' ? { action: 'accept', content: given[key] } : given[key];
  }
  if (problems.length > 0) return { ok: false, reason: 'mismatch', problems };
  try {
    checkAnswers(responses);
  } catch (error) {
    if (error instanceof LimitExceededError) return { ok: false, reason: 'too-large', message: error.message };
    throw error;
  }
  return { ok: true, responses };
}

/** How `value` does not fit `request`, or `undefined`. */
function mismatch(request: InputRequest, value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object';
  const schema = request.method === 'elicitation/create' ? request.params?.['requestedSchema'] : undefined;
  if (typeof schema !== 'object' || schema === null) return undefined;
  return schemaMismatch(schema as Record<string, unknown>, value);
}
