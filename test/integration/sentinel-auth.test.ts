/**
 * Sentinels that require a password, as a Redis behind Sentinel with auth is
 * commonly deployed (the Sentinels take the data nodes' password): the node
 * gives its redis.password (and redis.username) to the Sentinels as well as to
 * the primary they name, and still finds Sentinels that ask for none. It gave
 * the Sentinels no password at all, and never connected.
 */
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode } from '../helpers/node';
import { startSentinel, type TestSentinel } from '../helpers/sentinel';

const PASSWORD = 's3cret';
const redis = useEmbeddedRedis();
const sentinels: TestSentinel[] = [];
beforeAll(async () => {
  await redis.command('CONFIG', 'SET', 'requirepass', PASSWORD);
});
// (the server itself is stopped by its helper, with SIGTERM: no password needed)
afterAll(() => sentinels.forEach((s) => s.stop()));

it.each([
  ['that require the password', true],
  ['that require none', false],
])('serves Steps through Sentinels %s, with redis.password', async (_label, requirepass) => {
  const sentinel = await startSentinel(redis.port, { downAfterMs: 5000, authPass: PASSWORD, requirepass: requirepass ? PASSWORD : undefined });
  sentinels.push(sentinel);
  const t = await startTestNode('', uniquePrefix('sen-auth'), { ...sentinel.nodeConfig, 'redis.password': PASSWORD });
  try {
    const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
    expect(r.created).toBe(true);
    await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f' });
    expect((await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome?.status).toBe(pb.OutcomeStatus.CANCELLED);
  } finally {
    await t.close();
  }
}, 30_000);
