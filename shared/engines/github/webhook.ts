/**
 * What a delivery to `POST /webhooks/github` is, decided before anything is
 * written: a pure function of the request's plain parts, tested as a table.
 * The body's size is checked first, then its signature over the raw bytes
 * (a base64 body decoded first, as API Gateway hands a binary one), and only
 * a signed body is parsed. The route then records the delivery once by its
 * `X-GitHub-Delivery` and enqueues; the worker makes the API calls.
 */
import { validSignature } from './signature.ts';

/** The largest body the route reads (a `workflow_run` event is some tens of kB). */
export const WEBHOOK_BODY_LIMIT = 512 * 1024;

/** A delivery's parts, as the route received them (header names in lower case). */
export interface Delivery {
  headers: Readonly<Record<string, string | undefined>>;
  body: string;
  isBase64Encoded: boolean;
}

/** What the route does with a delivery. */
export type DeliveryDecision =
  | { status: 413; reason: 'too large' }
  | { status: 401; reason: 'bad signature' }
  | { status: 400; reason: 'no delivery id' | 'not JSON' }
  /** Signed, but nothing this server follows: answered 202 and logged by its `reason`. */
  | { status: 202; kind: 'ignored'; reason: string }
  | { status: 202; kind: 'completed'; deliveryId: string; runId: number; conclusion: string | null };

/** Decides what delivery `delivery` is, under the webhook's `secret`. */
export function classifyDelivery(secret: string, delivery: Delivery): DeliveryDecision {
  const raw = delivery.isBase64Encoded ? Buffer.from(delivery.body, 'base64') : Buffer.from(delivery.body, 'utf8');
  if (raw.byteLength > WEBHOOK_BODY_LIMIT) return { status: 413, reason: 'too large' };
  if (!validSignature(secret, raw, delivery.headers['x-hub-signature-256'])) return { status: 401, reason: 'bad signature' };
  const deliveryId = delivery.headers['x-github-delivery'];
  if (!deliveryId) return { status: 400, reason: 'no delivery id' };
  const event = delivery.headers['x-github-event'];
  if (event !== 'workflow_run') return { status: 202, kind: 'ignored', reason: `event ${String(event)}` };
  const payload = parsed(raw);
  if (payload === undefined) return { status: 400, reason: 'not JSON' };
  const run = payload.workflow_run;
  if (payload.action !== 'completed') return { status: 202, kind: 'ignored', reason: `action ${String(payload.action)}` };
  if (typeof run?.id !== 'number') return { status: 202, kind: 'ignored', reason: 'no run' };
  return { status: 202, kind: 'completed', deliveryId, runId: run.id, conclusion: run.conclusion ?? null };
}

interface RunEvent {
  action?: unknown;
  workflow_run?: { id?: unknown; conclusion?: string | null };
}

/** The body as JSON, or undefined when it is none (a signed body that is not JSON is the sender's error). */
function parsed(raw: Buffer): RunEvent | undefined {
  const text = raw.toString('utf8');
  if (!/^\s*\{/.test(text)) return undefined;
  try {
    return JSON.parse(text) as RunEvent;
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}
