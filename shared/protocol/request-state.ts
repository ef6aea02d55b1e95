import { createRequestStateCodec, type RequestStateCodec, type ServerContext } from '@modelcontextprotocol/server';
import { checkAnswers, MAX_REQUEST_STATE_BYTES } from '../tasks/limits.ts';
import { invalidParams } from './errors.ts';

/** What an inline multi-round-trip call carries from one round to the next. */
export interface SealedState {
  /** Answers gathered in earlier rounds, by key. */
  answers: Record<string, unknown>;
  /** Every key asked so far: answers to other keys are ignored. */
  issuedKeys: string[];
}

/** Whom and what a state was minted for: state minted for one never opens for another. */
export interface StateBinding {
  principal: string;
  tool: string;
}

/** How long a minted `requestState` may be echoed back (a person answering a form). */
const REQUEST_STATE_TTL_SECONDS = 15 * 60;

/** The smallest key the sealer accepts (HMAC-SHA256: 256 bits). */
export const REQUEST_STATE_KEY_BYTES = 32;

export interface RequestStateSealer {
  seal(state: SealedState, binding: StateBinding): Promise<string>;
  /**
   * The state an echoed `requestState` carries; `undefined` (a first round)
   * opens as no answers and no keys. Anything else that is not a state this
   * server sealed for this principal and tool, unexpired, is refused with
   * `-32602` (spec: tampered state MUST be rejected).
   */
  open(raw: unknown, binding: StateBinding): Promise<SealedState>;
}

/**
 * Seals `requestState` with the SDK's HMAC codec (`createRequestStateCodec`):
 * the payload is signed, not encrypted (the client may read its own answers),
 * and bound to principal and tool through the codec's binding tag, which
 * carries neither in clear. The key is read once, on first use.
 */
export function requestStateSealer(key: () => Promise<Uint8Array>): RequestStateSealer {
  let codecs: Promise<(binding: StateBinding) => RequestStateCodec<SealedState>> | undefined;
  const codecFor = (binding: StateBinding) =>
    (codecs ??= key().then((bytes) => {
      if (bytes.byteLength < REQUEST_STATE_KEY_BYTES)
        throw new RangeError(`The requestState key must be at least ${REQUEST_STATE_KEY_BYTES} bytes`);
      return (b: StateBinding) =>
        createRequestStateCodec<SealedState>({
          key: bytes,
          ttlSeconds: REQUEST_STATE_TTL_SECONDS,
          bind: () => `${b.principal}\u0000${b.tool}`,
        });
    })).then((make) => make(binding));

  return {
    async seal(state, binding) {
      // The binding ignores the context; `mint` only insists on having one.
      return (await codecFor(binding)).mint(state, {} as ServerContext);
    },
    async open(raw, binding) {
      if (raw === undefined) return { answers: {}, issuedKeys: [] };
      if (typeof raw !== 'string') throw invalidParams('Invalid or expired requestState');
      if (Buffer.byteLength(raw, 'utf8') > MAX_REQUEST_STATE_BYTES) {
        throw invalidParams(`requestState is over its limit of ${MAX_REQUEST_STATE_BYTES} bytes`);
      }
      const codec = await codecFor(binding);
      let state: SealedState;
      try {
        state = await codec.verify(raw, {} as ServerContext);
      } catch {
        // The codec's reason (mac, expired, bind, malformed) is not the client's business.
        throw invalidParams('Invalid or expired requestState');
      }
      checkAnswers(state.answers);
      return state;
    },
  };
}
