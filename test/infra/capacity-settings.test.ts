/**
 * The settings that move the stack's limits: the index shard count reaches
 * every function (and the operator commands, through an output), and the
 * API throttle is sized from the worker concurrency unless set.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { OPS_OUTPUTS } from '../../infra/outputs.ts';
import { throttleFor } from '../../infra/sizing.ts';
import { ENV } from '../../shared/config.ts';
import { functions, type Json, removeSynthesized, resourcesOf, synth } from './synth.ts';

after(removeSynthesized);

const unbundled = (context: Record<string, unknown>) => synth({ 'aws:cdk:bundling-stacks': [], ...context });

function stage(json: Json): Json {
  const [[, found]] = resourcesOf(json, 'AWS::ApiGatewayV2::Stage') as [[string, Json]];
  return found['Properties']['DefaultRouteSettings'] as Json;
}

describe('capacity settings', () => {
  it('-c activeIndexShards=8 gives every function TASKS_ACTIVE_INDEX_SHARDS=8 and the operator commands an output', () => {
    const { json } = unbundled({ activeIndexShards: '8' });
    const all = functions(json);
    for (const [name, [, fn]] of Object.entries(all)) {
      assert.equal(fn['Properties']['Environment']['Variables'][ENV.activeIndexShards], '8', name);
    }
    const outputs = json['Outputs'] as Record<string, Json>;
    assert.equal(outputs[OPS_OUTPUTS.activeIndexShards]?.['Value'], '8');
  });

  it('without it, every function gets the default 4', () => {
    const { json } = unbundled({});
    for (const [name, [, fn]] of Object.entries(functions(json))) {
      assert.equal(fn['Properties']['Environment']['Variables'][ENV.activeIndexShards], '4', name);
    }
  });

  it('refuses a shard count out of bounds', () => {
    assert.throws(() => unbundled({ activeIndexShards: '65' }), /activeIndexShards.*between 1 and 64/);
    assert.throws(() => unbundled({ activeIndexShards: '0' }), /activeIndexShards/);
  });

  it('sizes the throttle from the worker concurrency unless it is given', () => {
    assert.deepEqual(throttleFor(10), { rateLimit: 550, burstLimit: 1100 });
    assert.deepEqual(stage(unbundled({ workerMaxConcurrency: '40' }).json), {
      ThrottlingRateLimit: throttleFor(40).rateLimit,
      ThrottlingBurstLimit: throttleFor(40).burstLimit,
    });
    assert.equal(throttleFor(40).rateLimit, 2200);
    assert.deepEqual(stage(unbundled({ workerMaxConcurrency: '40', throttleRateLimit: '300' }).json), {
      ThrottlingRateLimit: 300,
      ThrottlingBurstLimit: 600,
    });
    assert.deepEqual(stage(unbundled({ throttleRateLimit: '300', throttleBurstLimit: '350' }).json), {
      ThrottlingRateLimit: 300,
      ThrottlingBurstLimit: 350,
    });
  });
});
