/**
 * A Redis at its maxmemory under noeviction (the policy zdmatch needs,
 * docs/operations.md) refuses writes with OOM: an enqueue then fails as the
 * store refusing the call (UNAVAILABLE, ZD_STORE_UNAVAILABLE) with Redis's
 * OOM reason, which the producer sees and retries once memory is freed — not
 * as ZD_INTERNAL, which hides the cause and says the node is broken. A real
 * redis-server whose maxmemory is lowered under a running node.
 */
import { ClientError, Status } from 'nice-grpc';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';

const redis = useEmbeddedRedis({ args: ['--maxmemory-policy', 'noeviction'] });
let t: TestNode;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('oom'));
});
afterEach(async () => {
  await redis.command('CONFIG', 'SET', 'maxmemory', '0');
  await t.close().catch(() => undefined);
});

const step = (id: string) => ({ tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: id });

it('answers an enqueue refused with OOM UNAVAILABLE (ZD_STORE_UNAVAILABLE) naming OOM, and takes it once memory is freed', async () => {
  expect(await redis.command('CONFIG', 'SET', 'maxmemory', '1')).toBe('OK');
  const err = await t.matching.enqueueStep({ step: step('s1') }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
  expect((err as ClientError).details).toMatch(/^ZD_STORE_UNAVAILABLE: .*OOM/);
  await redis.command('CONFIG', 'SET', 'maxmemory', '0');
  expect((await t.matching.enqueueStep({ step: step('s1') })).created).toBe(true);
}, 30_000);
