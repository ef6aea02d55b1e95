/**
 * The in-memory adapter of the task store, a wing of `shared/tasks/`: the
 * tests' store, held to the same contract as DynamoDB's. Nothing outside this
 * folder imports its other files (the layout test checks it).
 */
export { InMemoryTaskStore } from './store.ts';
