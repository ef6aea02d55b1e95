import { TasksError } from '../errors.ts';
import { EXECUTIONS, type ToolDefinition } from './tool.ts';

/** Tool names as MCP clients accept them (SEP-986: 1–128 characters of this set). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** A tool catalogue that cannot be served; the message names the tool and what is wrong. */
export class CatalogueError extends TasksError {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogueError';
  }
}

/**
 * The catalogue by name, once every definition has been checked: a duplicate
 * name or an invalid definition throws {@link CatalogueError} naming the tool,
 * so a function or the local stack stops at start instead of serving a
 * catalogue in which one tool silently replaced another, or one that fails
 * on its first call. The checks repeat at run time what the types say, for
 * definitions that bypassed them (plain JavaScript, `as` casts, JSON).
 */
export function validateCatalogue(tools: readonly ToolDefinition[]): ReadonlyMap<string, ToolDefinition> {
  const byName = new Map<string, ToolDefinition>();
  tools.forEach((tool, index) => {
    const name = (tool as Partial<ToolDefinition> | undefined)?.name;
    const label = typeof name === 'string' && name !== '' ? `Tool "${name}"` : `Tool #${index + 1} of the catalogue`;
    const problem = definitionProblem(tool);
    if (problem) throw new CatalogueError(`${label}: ${problem}`);
    if (byName.has(tool.name)) throw new CatalogueError(`${label} is defined twice: tool names must be unique`);
    byName.set(tool.name, tool);
  });
  return byName;
}

function definitionProblem(tool: ToolDefinition): string | undefined {
  if (typeof tool !== 'object' || tool === null) return 'is not a tool definition';
  if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name))
    return 'the name must be 1–128 characters of A–Z, a–z, 0–9, "_", "-" and "."';
  if (typeof tool.description !== 'string' || tool.description.trim() === '') return 'has no description';
  const schema = tool.inputSchema as { safeParse?: unknown; def?: { type?: unknown } } | undefined;
  if (typeof schema?.safeParse !== 'function') return 'inputSchema must be a zod schema';
  if (schema.def?.type !== 'object') return 'inputSchema must be a zod object schema (tool arguments are an object)';
  if (!(EXECUTIONS as readonly unknown[]).includes(tool.execution))
    return `execution must be one of ${EXECUTIONS.join(', ')}, got ${JSON.stringify(tool.execution)}`;
  if (typeof tool.handler !== 'function') return 'has no handler function';
  if (tool.prepare !== undefined && typeof tool.prepare !== 'function') return 'prepare must be a function';
  if (tool.prepare !== undefined && tool.execution === 'sync') return 'prepare only applies to task and optional tools';
  if (tool.inline !== undefined && (typeof tool.inline !== 'function' || tool.execution !== 'optional'))
    return 'inline must be a function, on an optional tool';
  if (tool.pollIntervalMs !== undefined && !(Number.isSafeInteger(tool.pollIntervalMs) && tool.pollIntervalMs > 0))
    return 'pollIntervalMs must be a positive integer';
  if (tool.answeredBy !== undefined && tool.answeredBy !== 'person') return 'answeredBy must be "person" when set';
  if (tool.fourEyes === true && tool.answeredBy !== 'person') return 'fourEyes needs answeredBy: "person"';
  if (tool.fallback !== undefined && typeof tool.fallback !== 'boolean') return 'fallback must be a boolean when set';
  if (tool.eventMessage !== undefined && typeof tool.eventMessage !== 'boolean') return 'eventMessage must be a boolean when set';
  if (tool.joinRepeats !== undefined && typeof tool.joinRepeats !== 'boolean') return 'joinRepeats must be a boolean when set';
  if (tool.version !== undefined && (typeof tool.version !== 'string' || tool.version.trim() === '' || tool.version.length > 64))
    return 'version must be a non-empty string of at most 64 characters';
  return undefined;
}
