/**
 * A node finds its Redis through Sentinel (redis.sentinels, redis.sentinelName)
 * and serves Steps end to end: a real redis-server in sentinel mode watching
 * the test's redis-server.
 */
import { pb } from '../../src/wire';
import { createRedis } from '../../src/store/redis';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { startSentinel, type TestSentinel } from '../helpers/sentinel';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
let sentinel: TestSentinel | undefined;
afterAll(() => sentinel?.stop());

it('serves Steps through a Redis found by Sentinel', async () => {
  sentinel = await startSentinel(redis.port, { downAfterMs: 5000 });
  const t = await startTestNode('', uniquePrefix('sen'), sentinel.nodeConfig);
  try {
    const s = openSlot(t.worker, registerFrame());
    await s.nextOf('registered');
    const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('via sentinel') } });
    await s.nextOf('result_ack');
    const o = (await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome!;
    expect(o.status).toBe(pb.OutcomeStatus.COMPLETED);
    expect(Buffer.from(o.output!).toString()).toBe('via sentinel');
    s.reset();
  } finally {
    await t.close();
  }
});

it('leaves a Sentinel client closed on purpose closed: only an end nobody asked for is connected again', async () => {
  sentinel ??= await startSentinel(redis.port, { downAfterMs: 5000 });
  const settings = { url: '', clusterNodes: [], sentinels: sentinel.nodeConfig['redis.sentinels'], sentinelName: sentinel.nodeConfig['redis.sentinelName'], password: '' };
  const quitted = createRedis(settings);
  const disconnected = createRedis(settings);
  try {
    expect(await quitted.ping()).toBe('PONG');
    expect(await disconnected.ping()).toBe('PONG');
    await quitted.quit();
    disconnected.disconnect();
    // well past the moment an end nobody asked for is connected again
    await sleep(1000);
    expect([quitted.status, disconnected.status]).toEqual(['end', 'end']);
  } finally {
    quitted.disconnect();
    disconnected.disconnect();
  }
});
