import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { TaskStore } from '../store.ts';
import type { StorePolicy } from '../store-types.ts';
import { callbackCompletions, callbackWaits } from './callbacks.ts';
import { creation } from './creation.ts';
import { failing, leases } from './leases.ts';
import { answering, cancelling } from './people.ts';
import { listing, reading, steps } from './reads.ts';
import { dynamoDbSignInNames } from './sign-in-names.ts';
import { dynamoDbSignOuts } from './sign-outs.ts';
import { sweeping } from './sweeps.ts';
import type { StoreTable } from './update.ts';
import { workflowReports, workflowRuns } from './workflows.ts';

/** Where a DynamoDB store works: its client, its table, and the policy it was built with. */
export interface DynamoDbStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  policy: StorePolicy;
}

/**
 * A group of the store's operations on a table (`creation`, `leases`,
 * `sweeping`, …): each function composes the groups it calls
 * ({@link dynamoDbStoreOf}), so its bundle carries those and no other.
 */
export type StoreGroup = (table: StoreTable) => Partial<TaskStore>;

type KeysOf<T> = T extends unknown ? keyof T : never;

/** The store a list of groups makes: exactly their operations. */
export type StoreOf<G extends readonly StoreGroup[]> = Pick<TaskStore, Extract<KeysOf<ReturnType<G[number]>>, keyof TaskStore>>;

/** The operations of `groups` on one table: what a function's composition hands its domain code. */
export function dynamoDbStoreOf<const G extends readonly StoreGroup[]>(options: DynamoDbStoreOptions, groups: G): StoreOf<G> {
  const table: StoreTable = { client: options.client, tableName: options.tableName, policy: options.policy };
  return Object.assign({}, ...groups.map((group) => group(table))) as StoreOf<G>;
}

/** Every group: the whole port. */
const ALL_GROUPS = [
  creation,
  reading,
  listing,
  steps,
  leases,
  failing,
  answering,
  cancelling,
  sweeping,
  callbackWaits,
  callbackCompletions,
  workflowRuns,
  workflowReports,
  dynamoDbSignOuts,
  dynamoDbSignInNames,
] as const;

/**
 * {@link TaskStore} on one DynamoDB table (layout in `dynamodb/schema.ts`),
 * every operation: what the local stack, the operator commands and the tests
 * use. A deployed function composes only the groups it calls instead
 * ({@link dynamoDbStoreOf}).
 *
 * Items of a task share its partition: the row (`sk = 'task'`), step
 * checkpoints (`step#<name>`) and, for a result too large for the row, its
 * chunks (`result#<id>#<n>`). Idempotency keys have partitions of their own
 * (`idem#<hash>`).
 *
 * Every state change is one conditional `PutItem`/`UpdateItem`; a failed
 * condition is translated in the adapter into the port's results and errors. What each
 * write changes is decided in `decisions.ts`, as for the in-memory store.
 * Writes made under a lease (`claim`, `heartbeat`, `finish`, `release`) and
 * `reschedule` need no read: they write the fields the decision would, under
 * a condition expression that states the decision's rule. `answer`, `cancel`
 * and `fail` read once, decide on the row read, and write the difference
 * guarded by the `version` they read, retrying a few times when another
 * writer got there first.
 *
 * Terminal rows carry the TTL attribute at their end plus the retention; a
 * row waiting for input until a deadline carries it at that deadline plus
 * the retention (a backstop: the wait ends through its deadline, by the
 * sweeper); a working row carries none and is never deleted by DynamoDB. Working rows, and waiting rows with a deadline, carry
 * `activeShard` and `sweepAt`, which put them in the sparse
 * active index; every write that ends a task removes both in the
 * same request. The index is
 * keys-only, so a write costs it something only when it adds, moves or
 * removes those keys: entering and leaving are one index write each, moving
 * `sweepAt` two. `claim` and progress-only heartbeats leave `sweepAt` alone
 * (see the port's schedule), so a task that finishes within its first lease
 * enters the index once and leaves it once.
 *
 * The operations live in groups, by who calls them: `creation.ts` (the MCP
 * function), `leases.ts` (the worker: claim, heartbeat, finish, release;
 * fail), `people.ts` (answers, decisions, cancels), `reads.ts` (get, list,
 * the step journal), `sweeps.ts` (the sweeper), `callbacks.ts`,
 * `workflows.ts`, `sign-outs.ts`, `sign-in-names.ts`; beside them the row
 * codec and item keys (`codec.ts`), the update builder and write guards
 * (`update.ts`), rows with chunked results (`results.ts`), idempotent
 * creation (`idempotent.ts`), the cap on unfinished tasks (`slots.ts`) and
 * the reads of the active-task index (`active-index.ts`).
 */
export class DynamoDbTaskStore implements TaskStore {
  declare readonly create: TaskStore['create'];
  declare readonly get: TaskStore['get'];
  declare readonly list: TaskStore['list'];
  declare readonly loadSteps: TaskStore['loadSteps'];
  declare readonly loadJournal: TaskStore['loadJournal'];
  declare readonly saveStep: TaskStore['saveStep'];
  declare readonly claim: TaskStore['claim'];
  declare readonly heartbeat: TaskStore['heartbeat'];
  declare readonly finish: TaskStore['finish'];
  declare readonly release: TaskStore['release'];
  declare readonly fail: TaskStore['fail'];
  declare readonly answer: TaskStore['answer'];
  declare readonly decide: TaskStore['decide'];
  declare readonly getDecision: TaskStore['getDecision'];
  declare readonly getWaitingForPerson: TaskStore['getWaitingForPerson'];
  declare readonly listWaitingForPeople: TaskStore['listWaitingForPeople'];
  declare readonly cancel: TaskStore['cancel'];
  declare readonly findDue: TaskStore['findDue'];
  declare readonly reschedule: TaskStore['reschedule'];
  declare readonly expireWait: TaskStore['expireWait'];
  declare readonly awaitCallbacks: TaskStore['awaitCallbacks'];
  declare readonly completeCallback: TaskStore['completeCallback'];
  declare readonly beatCallback: TaskStore['beatCallback'];
  declare readonly followExecution: TaskStore['followExecution'];
  declare readonly restartExecution: TaskStore['restartExecution'];
  declare readonly askFromWorkflow: TaskStore['askFromWorkflow'];
  declare readonly workflowProgress: TaskStore['workflowProgress'];
  declare readonly dropWorkflowToken: TaskStore['dropWorkflowToken'];
  declare readonly endWorkflow: TaskStore['endWorkflow'];
  declare readonly recordSignOut: TaskStore['recordSignOut'];
  declare readonly signedOutAfter: TaskStore['signedOutAfter'];
  declare readonly recordSignInName: TaskStore['recordSignInName'];
  declare readonly signInNameOf: TaskStore['signInNameOf'];

  constructor(options: DynamoDbStoreOptions) {
    const all: TaskStore = dynamoDbStoreOf(options, ALL_GROUPS);
    Object.assign(this, all);
  }
}
