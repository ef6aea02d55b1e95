/**
 * Tool parameters mirrored into HTTP headers (2026-07-28 Streamable HTTP,
 * "Custom Headers from Tool Parameters"): a property of a tool's input schema
 * marked `x-mcp-header: "Region"` travels, besides the body, as
 * `Mcp-Param-Region`, so that gateways and load balancers can route on it
 * without reading the body. Clients drop a tool whose declaration breaks the
 * rules, so the catalogue refuses one at start ({@link scanHeaderParams},
 * applied by `tool-headers.ts`); a 2026-07-28 `tools/call` whose header is
 * missing, malformed or says something else than its body is refused before
 * anything runs ({@link paramHeaderProblem}). Pure, and light: the CLI and
 * the test kit send the headers with {@link paramHeadersFor}.
 */
import { isUtf8 } from 'node:buffer';

/** The schema keyword that declares a header, and the prefix of the header's name. */
const HEADER_KEYWORD = 'x-mcp-header';
const HEADER_PREFIX = 'Mcp-Param-';

/** A property mirrored into a header: its path through `properties`, the header's name part, its JSON type. */
export interface HeaderParam {
  readonly path: readonly string[];
  readonly name: string;
  readonly type: HeaderParamType;
}

/** The JSON types a mirrored parameter may have (`number` is not one: its text form is ambiguous). */
const HEADER_TYPES = ['string', 'integer', 'boolean'] as const;
export type HeaderParamType = (typeof HEADER_TYPES)[number];

/** RFC 9110 §5.1 `token` (`1*tchar`): what a header's name may be made of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Keywords whose subschemas are not reached through `properties` alone: a
 * declaration under any of them (an array's items, a branch of `anyOf`, a
 * definition behind `$ref` …) has no single value to mirror, and makes the
 * tool invalid.
 */
const ELSEWHERE = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'dependencies',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
] as const;

/** Keywords holding a map of subschemas by name (the others hold one subschema or a list). */
const MAPS = new Set<string>(['patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions']);

/** A schema's header declarations, or what is wrong with the first one that breaks a rule. */
export type HeaderScan = { ok: true; params: HeaderParam[] } | { ok: false; problem: string };

/**
 * The `x-mcp-header` declarations of a tool's input schema (JSON Schema), each
 * checked: a non-empty RFC 9110 token, on a `string`, `integer` or `boolean`
 * property reached from the root through `properties` alone, unique among the
 * schema's declarations whatever the case.
 */
export function scanHeaderParams(inputSchema: Record<string, unknown>): HeaderScan {
  const params: HeaderParam[] = [];
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (!isObject(node)) return undefined;
    if (HEADER_KEYWORD in node) {
      const problem = declarationProblem(node, path, reachable, seen);
      if (problem) return problem;
      const name = node[HEADER_KEYWORD] as string;
      seen.set(name.toLowerCase(), name);
      params.push({ path, name, type: node['type'] as HeaderParamType });
    }
    if (isObject(node['properties'])) {
      for (const [key, child] of Object.entries(node['properties'])) {
        const problem = visit(child, [...path, key], reachable);
        if (problem) return problem;
      }
    }
    for (const keyword of ELSEWHERE) {
      const sub = node[keyword];
      const branches = Array.isArray(sub) ? sub : MAPS.has(keyword) && isObject(sub) ? Object.values(sub) : [sub];
      for (const branch of branches) {
        const problem = visit(branch, [...path, `(${keyword})`], false);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  const problem = visit(inputSchema, [], true);
  return problem ? { ok: false, problem } : { ok: true, params };
}

/** What breaks the rules in one declaration, if anything. */
function declarationProblem(
  node: Record<string, unknown>,
  path: readonly string[],
  reachable: boolean,
  seen: ReadonlyMap<string, string>,
): string | undefined {
  const where = path.length === 0 ? 'the input schema itself' : `"${path.join('.')}"`;
  if (!reachable || path.length === 0)
    return `${HEADER_KEYWORD} on ${where}: only a property reached through "properties" alone may be mirrored into a header (not under items, additionalProperties, anyOf/oneOf/allOf/not, if/then/else or $defs)`;
  const name = node[HEADER_KEYWORD];
  if (typeof name !== 'string' || !TOKEN.test(name))
    return `${HEADER_KEYWORD} on ${where} must be a header name: a non-empty RFC 9110 token (letters, digits and !#$%&'*+-.^_\`|~; no spaces or delimiters)`;
  const type = node['type'];
  if (!(HEADER_TYPES as readonly unknown[]).includes(type))
    return `${HEADER_KEYWORD} "${name}" on ${where}: the property must have type string, integer or boolean, not ${JSON.stringify(type ?? null)}`;
  const other = seen.get(name.toLowerCase());
  if (other !== undefined) return `${HEADER_KEYWORD} "${name}" on ${where}: the header names must differ whatever the case ("${other}")`;
  return undefined;
}

/**
 * Why a call's `Mcp-Param-*` headers do not stand for its arguments, or
 * `undefined` when they do. For each parameter whose argument is present and
 * not `null`, the header must be there and, decoded, equal the argument's text
 * (an integer compared as a number: `42.0` is `42`). An absent or `null`
 * argument expects no header (one sent is ignored); an argument of another
 * shape than the schema's is left to the arguments' own check. Worded without
 * the values.
 */
export function paramHeaderProblem(params: readonly HeaderParam[], args: unknown, headers: Headers): string | undefined {
  for (const param of params) {
    const value = valueAt(args, param.path);
    const expected = headerText(value);
    if (expected === undefined) continue;
    const header = `${HEADER_PREFIX}${param.name}`;
    const argument = `arguments.${param.path.join('.')}`;
    const raw = headers.get(header);
    if (raw === null) return `The ${header} header is missing: it must mirror ${argument}`;
    const decoded = decodeHeaderValue(raw);
    if (decoded === undefined)
      return `The ${header} header is malformed: a value that is not plain visible ASCII must be sent as =?base64?<canonical Base64 of its UTF-8>?=`;
    if (!sameValue(decoded, value, expected, param.type)) return `The ${header} header does not match ${argument}`;
  }
  return undefined;
}

/**
 * The `Mcp-Param-*` headers a client sends with a call of a tool whose input
 * schema is `inputSchema` (what the server checks with {@link paramHeaderProblem}):
 * one per declared parameter whose argument is present and not `null`.
 */
export function paramHeadersFor(inputSchema: Record<string, unknown>, args: Record<string, unknown>): Record<string, string> {
  const scan = scanHeaderParams(inputSchema);
  if (!scan.ok) return {};
  const headers: Record<string, string> = {};
  for (const param of scan.params) {
    const text = headerText(valueAt(args, param.path));
    if (text !== undefined) headers[`${HEADER_PREFIX}${param.name}`] = encodeHeaderValue(text);
  }
  return headers;
}

const BASE64_OPEN = '=?base64?';
const BASE64_CLOSE = '?=';
/** Canonical Base64: the standard alphabet, padded, no whitespace. */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** A value sent as it is: visible ASCII, space and tab, not empty, without leading or trailing whitespace. */
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?$/;

function isSentinel(value: string): boolean {
  return value.length >= BASE64_OPEN.length + BASE64_CLOSE.length && value.startsWith(BASE64_OPEN) && value.endsWith(BASE64_CLOSE);
}

/**
 * A header's value as the text it stands for: the `=?base64?…?=` form decoded
 * (canonical Base64 of valid UTF-8 only), any other value as it is, if made
 * of visible ASCII, spaces and tabs. `undefined`: malformed.
 */
export function decodeHeaderValue(raw: string): string | undefined {
  if (!isSentinel(raw)) return /^[\x20-\x7e\t]*$/.test(raw) ? raw : undefined;
  const payload = raw.slice(BASE64_OPEN.length, -BASE64_CLOSE.length);
  if (!CANONICAL_BASE64.test(payload)) return undefined;
  const bytes = Buffer.from(payload, 'base64');
  return isUtf8(bytes) ? bytes.toString('utf8') : undefined;
}

/** A text as a header carries it: as it is when plain, else (or when it looks like the Base64 form) Base64 of its UTF-8. */
export function encodeHeaderValue(text: string): string {
  if (PLAIN.test(text) && !isSentinel(text)) return text;
  return `${BASE64_OPEN}${Buffer.from(text, 'utf8').toString('base64')}${BASE64_CLOSE}`;
}

/** An argument's text in a header: a string as it is, a boolean `true`/`false`, a finite number in decimal; else none. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function sameValue(decoded: string, value: unknown, expected: string, type: HeaderParamType): boolean {
  if (type === 'integer' && typeof value === 'number' && /^-?\d+(?:\.\d+)?$/.test(decoded)) return Number(decoded) === value;
  return decoded === expected;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
