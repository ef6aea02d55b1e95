/**
 * The call router (`shared/protocol/router.ts`) as a table: each row the
 * facts of one `tools/call` and the route it must take.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CallFacts, type CallRoute, type CallTarget, routeCall } from '../../../shared/protocol/router.ts';
import type { Execution } from '../../../shared/runtime/tool.ts';

const tool = (execution: Execution, options: { optOut?: boolean; cheap?: boolean } = {}): CallTarget => ({
  kind: 'tool',
  execution,
  fallback: !options.optOut,
  cheap: options.cheap ?? false,
});
const FALLBACK_TOOL: CallTarget = { kind: 'fallback-tool' };

const inline: CallRoute = { kind: 'inline' };
const task: CallRoute = { kind: 'task' };
const legacyTask: CallRoute = { kind: 'legacy-task' };
const fallback: CallRoute = { kind: 'fallback' };
const fallbackTool: CallRoute = { kind: 'fallback-tool' };
const missing: CallRoute = { kind: 'refuse', reason: 'missing-capability' };
const declaredFallbackTool: CallRoute = { kind: 'refuse', reason: 'fallback-tool-declared' };

type Row = [label: string, facts: Partial<CallFacts> & Pick<CallFacts, 'target'>, route: CallRoute];

/** Defaults: a 2026-07-28 request that declares nothing, on a deployment with the fallback on. */
const base: Omit<CallFacts, 'target'> = { era: 'modern', declaresTasks: false, asksLegacyTask: false, fallbackOn: true };

const rows: Row[] = [
  // The fallback tools.
  ['fallback tool, modern, not declaring', { target: FALLBACK_TOOL }, fallbackTool],
  ['fallback tool, modern, declaring', { target: FALLBACK_TOOL, declaresTasks: true }, declaredFallbackTool],
  ['fallback tool, legacy', { target: FALLBACK_TOOL, era: 'legacy' }, fallbackTool],
  ['fallback tool, legacy asking for a task', { target: FALLBACK_TOOL, era: 'legacy', asksLegacyTask: true }, fallbackTool],
  // sync tools always run inline.
  ['sync, modern, declaring', { target: tool('sync'), declaresTasks: true }, inline],
  ['sync, modern, not declaring', { target: tool('sync') }, inline],
  ['sync, legacy asking for a task', { target: tool('sync'), era: 'legacy', asksLegacyTask: true }, inline],
  ['sync, fallback off', { target: tool('sync'), fallbackOn: false }, inline],
  // task tools.
  ['task, modern, declaring', { target: tool('task'), declaresTasks: true }, task],
  ['task, modern, declaring, fallback off', { target: tool('task'), declaresTasks: true, fallbackOn: false }, task],
  ['task, modern, not declaring', { target: tool('task') }, fallback],
  ['task, modern, not declaring, fallback off', { target: tool('task'), fallbackOn: false }, missing],
  ['task, modern, not declaring, tool opts out', { target: tool('task', { optOut: true }) }, missing],
  ['task, modern, params.task is not how 2026 asks', { target: tool('task'), asksLegacyTask: true }, fallback],
  ['task, legacy asking for a task', { target: tool('task'), era: 'legacy', asksLegacyTask: true }, legacyTask],
  ['task, legacy asking, tool opts out', { target: tool('task', { optOut: true }), era: 'legacy', asksLegacyTask: true }, legacyTask],
  ['task, legacy not asking', { target: tool('task'), era: 'legacy' }, fallback],
  ['task, legacy not asking, fallback off', { target: tool('task'), era: 'legacy', fallbackOn: false }, missing],
  ['task, legacy: an envelope declaration does not count', { target: tool('task'), era: 'legacy', declaresTasks: true }, fallback],
  // optional tools.
  ['optional, modern, declaring', { target: tool('optional'), declaresTasks: true }, task],
  ['optional, modern, declaring, cheap call', { target: tool('optional', { cheap: true }), declaresTasks: true }, inline],
  ['optional, modern, not declaring', { target: tool('optional') }, fallback],
  ['optional, modern, not declaring, cheap call', { target: tool('optional', { cheap: true }) }, inline],
  ['optional, modern, not declaring, fallback off', { target: tool('optional'), fallbackOn: false }, inline],
  ['optional, modern, not declaring, tool opts out', { target: tool('optional', { optOut: true }) }, inline],
  ['optional, legacy asking for a task', { target: tool('optional'), era: 'legacy', asksLegacyTask: true }, legacyTask],
  ['optional, legacy asking, cheap call', { target: tool('optional', { cheap: true }), era: 'legacy', asksLegacyTask: true }, inline],
  ['optional, legacy not asking', { target: tool('optional'), era: 'legacy' }, fallback],
  ['optional, legacy not asking, fallback off', { target: tool('optional'), era: 'legacy', fallbackOn: false }, inline],
];

describe('the call router', () => {
  for (const [label, facts, route] of rows) {
    it(label, () => assert.deepEqual(routeCall({ ...base, ...facts }), route));
  }

  it('answers every combination of facts with a route, never throwing', () => {
    const kinds = new Set<string>();
    const targets = [
      FALLBACK_TOOL,
      ...(['sync', 'task', 'optional'] as const).flatMap((e) =>
        [false, true].flatMap((optOut) => [false, true].map((cheap) => tool(e, { optOut, cheap }))),
      ),
    ];
    for (const era of ['modern', 'legacy'] as const)
      for (const declaresTasks of [false, true])
        for (const asksLegacyTask of [false, true])
          for (const fallbackOn of [false, true])
            for (const target of targets) kinds.add(routeCall({ era, declaresTasks, asksLegacyTask, fallbackOn, target }).kind);
    assert.deepEqual([...kinds].sort(), ['fallback', 'fallback-tool', 'inline', 'legacy-task', 'refuse', 'task']);
  });
});
