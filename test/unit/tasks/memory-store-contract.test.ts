import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { CONTRACT_POLICY, describeTaskStore } from '../../contract/task-store.contract.ts';

describeTaskStore('InMemoryTaskStore', async () => ({ store: new InMemoryTaskStore(CONTRACT_POLICY) }));
