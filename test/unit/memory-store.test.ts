import { InMemoryTaskStore } from '../../shared/tasks/memory-store.ts';
import { CONTRACT_RETENTION_MS, describeTaskStore } from '../contract/task-store.contract.ts';

describeTaskStore('InMemoryTaskStore', async () => ({ store: new InMemoryTaskStore({ retentionMs: CONTRACT_RETENTION_MS }) }));
