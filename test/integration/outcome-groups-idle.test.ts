/**
 * A group's idle time in ListOutcomeGroups (what DropOutcomeGroup without
 * `force` goes by) is the time since its most recent read anywhere: the least
 * over its consumers on every partition and the nodes' notes of empty reads,
 * never below zero when a node's clock runs ahead.
 */
import { describeOutcomeGroups } from '../../src/store/outcome-groups';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'groupsidle');

async function readOne(partition: number, consumer: string): Promise<void> {
  const key = fx.keys.out(partition);
  await fx.client.xadd(key, '*', 'taskId', `t-${consumer}`, 'o', 'x');
  await fx.client.xgroup('CREATE', key, 'engine', '0').catch(() => undefined);
  await fx.client.xreadgroup('GROUP', 'engine', consumer, 'COUNT', 1, 'STREAMS', key, '>');
}

const engine = async (now?: number) => (await describeOutcomeGroups(fx.client, fx.keys, 4, now)).find((g) => g.name === 'engine')!;

it('is the time since the latest read of any consumer on any partition, not of the longest idle one', async () => {
  await readOne(0, 'gone');
  await new Promise((r) => setTimeout(r, 400));
  await readOne(2, 'live');
  const g = await engine();
  expect([g.consumers, g.partitions, g.pending]).toEqual([2, 2, 2]);
  expect(g.idleMs).toBeLessThan(300);
});

it('takes a node\'s note of a read when it is the latest, and counts one noted ahead of this clock as just now', async () => {
  await readOne(1, 'c1');
  await new Promise((r) => setTimeout(r, 300));
  const now = Date.now();
  await fx.client.hset(fx.keys.groupsSeen(), 'engine', String(now - 50));
  expect((await engine(now)).idleMs).toBe(50);
  await fx.client.hset(fx.keys.groupsSeen(), 'engine', String(now + 5000));
  expect((await engine(now)).idleMs).toBe(0);
});
