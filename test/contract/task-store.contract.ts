/**
 * The {@link TaskStore} contract: every adapter runs these same cases
 * (`describeTaskStore(name, makeStore)`), so the in-memory store and the
 * DynamoDB adapter cannot drift apart. Time is always passed in (`now`), never
 * slept through; every task gets a fresh id, so one store serves the suite.
 *
 * The cases live in one file per store method (`<method>.contract.ts`) over
 * the shared kit (`kit.ts`: policy, constants, scenario builders).
 */
import { after, before, describe } from 'node:test';
import type { TaskStore } from '../../shared/tasks/store.ts';
import { describeAnswer } from './answer.contract.ts';
import { describeCallbacks } from './callbacks.contract.ts';
import { describeCancel } from './cancel.contract.ts';
import { describeClaim } from './claim.contract.ts';
import { describeConcurrentCallers } from './concurrency.contract.ts';
import { describeCreateAndGet, describeIdempotentCreate, describeJoiningCreate } from './create.contract.ts';
import { describeDecide } from './decide.contract.ts';
import { describeExpiry } from './expiry.contract.ts';
import { describeFail } from './fail.contract.ts';
import { describeFinish } from './finish.contract.ts';
import { describeHeartbeat } from './heartbeat.contract.ts';
import { contractKit, type StoreUnderTest } from './kit.ts';
import { describeList } from './list.contract.ts';
import { describeMoments } from './moments.contract.ts';
import { describeRelease } from './release.contract.ts';
import { describeSignInNames } from './sign-in-names.contract.ts';
import { describeSignOuts } from './sign-outs.contract.ts';
import { describeSteps } from './steps.contract.ts';
import { describeSweep } from './sweep.contract.ts';
import { describeTerminalTasks } from './terminal.contract.ts';
import { describeWorkflows } from './workflows.contract.ts';

/**
 * Registers the contract cases for one adapter. `makeStore` is called once
 * (in `before`); the store must use {@link CONTRACT_POLICY}.
 */
export function describeTaskStore(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`TaskStore contract: ${name}`, () => {
    let subject: StoreUnderTest;
    const kit = contractKit((): TaskStore => subject.store);

    before(async () => {
      subject = await makeStore();
    });
    after(async () => {
      await subject?.close?.();
    });

    describeCreateAndGet(kit);
    describeExpiry(kit);
    describeClaim(kit);
    describeHeartbeat(kit);
    describeFinish(kit);
    describeCallbacks(kit);
    describeWorkflows(kit);
    describeRelease(kit);
    describeFail(kit);
    describeAnswer(kit);
    describeDecide(kit);
    describeCancel(kit);
    describeTerminalTasks(kit);
    describeSteps(kit);
    describeList(kit);
    describeSweep(kit);
    describeIdempotentCreate(kit);
    describeJoiningCreate(kit);
    describeConcurrentCallers(kit);
    describeSignOuts(kit);
    describeSignInNames(kit);
    describeMoments(kit);
  });
}
