/**
 * The wire's constants, each defined once: the protocol revision and the
 * extension this server speaks, the `_meta` keys it reads and writes, and the
 * JSON-RPC error codes it answers with. No imports, so every bundle, the CLI
 * and the tests can take them from here.
 */

/** The protocol revision that carries the extension. */
export const PROTOCOL_VERSION = '2026-07-28';

/** The extension's identifier (spec §1.10, item 53). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** `_meta` keys of the 2026-07-28 request envelope, and the 2025-11-25 related-task tag. */
export const META_KEYS = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  relatedTask: 'io.modelcontextprotocol/related-task',
} as const;

/** The `_meta` keys of a request's W3C trace context (SEP-414: unprefixed, as the MCP SDK's `TRACEPARENT_META_KEY` and kin). */
export const TRACE_META_KEYS = { traceparent: 'traceparent', tracestate: 'tracestate' } as const;

/** The `_meta` key under which a client may pass an idempotency key on `tools/call`. */
export const IDEMPOTENCY_KEY = 'dev.mcp-tasks-serverless/idempotencyKey';

// --- JSON-RPC error codes -----------------------------------------------------

/** The request is not a valid JSON-RPC request (a batch, a malformed Host or path, a body too large). */
export const INVALID_REQUEST = -32600;
/** A client mistake in the params, worded for the client. */
export const INVALID_PARAMS = -32602;
/** Anything else; unexpected errors are answered with {@link BARE_INTERNAL_ERROR} only. */
export const INTERNAL_ERROR = -32603;
/** The request needs a client capability it did not declare (the tasks extension, elicitation, sampling). */
export const MISSING_CAPABILITY = -32021;
/** An HTTP header disagrees with the body it mirrors, or is missing or malformed (2026-07-28 `HeaderMismatch`; HTTP 400). */
export const HEADER_MISMATCH = -32020;

/** The error a task ends with, and the answer to an unexpected error: no text of the exception. */
export const BARE_INTERNAL_ERROR = { code: INTERNAL_ERROR, message: 'Internal error' } as const;
