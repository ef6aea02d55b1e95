import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { CONTRACT_POLICY } from '../../contract/kit.ts';
import { describeTaskStore } from '../../contract/task-store.contract.ts';

describeTaskStore('InMemoryTaskStore', async () => ({ store: new InMemoryTaskStore(CONTRACT_POLICY) }));
