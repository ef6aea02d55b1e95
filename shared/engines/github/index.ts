/**
 * The GitHub Actions engine, a wing of the engine port
 * (`shared/engines/port.ts`): a repository's workflow run as one task. Its
 * REST calls over `fetch`, the run's opaque reference, the start-once rule,
 * the webhook's signature and deliveries, what a run's conclusion makes of
 * its task, and its cancel. Nothing outside this folder imports its other
 * files, and it imports no other engine's (the layout test checks both).
 */
export {
  type Dispatched,
  GitHubApi,
  GitHubApiError,
  type GitHubApiOptions,
  type WorkflowJob,
  type WorkflowRef,
  type WorkflowRun,
} from './api.ts';
export { failedJobs, type JobConclusion, outcomeOf, type RunOutcome } from './conclusions.ts';
export { type CancelOptions, cancelRun, endOfRun, type PollOptions, pollUntilCompleted, type RunEnd } from './follow.ts';
export { REFERENCE_PREFIX, runReference, titleCarries } from './reference.ts';
export { signatureOf, validSignature } from './signature.ts';
export {
  CLOCK_SKEW_MS,
  MissingRunNameError,
  REFERENCE_INPUT,
  RUN_NAME_LINE,
  RunNotFoundError,
  refusesRunDetails,
  type StartedRun,
  type StartOptions,
  type StartRequest,
  startRunOnce,
} from './start.ts';
export { classifyDelivery, type Delivery, type DeliveryDecision, WEBHOOK_BODY_LIMIT } from './webhook.ts';
