/**
 * Moving a hash slot of a real Redis Cluster (startRedisCluster) by hand, with
 * the commands `redis-cli --cluster reshard` sends: SETSLOT IMPORTING and
 * MIGRATING, MIGRATE of each key, then SETSLOT NODE on every primary.
 */
import { sendCommand, type RedisCluster } from '../../src/store/embedded-redis';

/** The port of the primary that serves `slot`, read from CLUSTER SLOTS. */
export async function ownerOf(cluster: RedisCluster, slot: number): Promise<number> {
  const slots = (await sendCommand(cluster.nodes[0]!.port, ['CLUSTER', 'SLOTS'])) as unknown as [number, number, [string, number]][];
  return Number(slots.find(([from, to]) => slot >= from && slot <= to)![2][1]);
}

export const idOf = async (port: number): Promise<string> => String(await sendCommand(port, ['CLUSTER', 'MYID']));

/** Opens the migration of `slot` from `src` to `dst`, as `redis-cli --cluster reshard` does first. */
export async function openMigration(slot: number, src: number, dst: number): Promise<void> {
  expect(await sendCommand(dst, ['CLUSTER', 'SETSLOT', slot, 'IMPORTING', await idOf(src)])).toBe('OK');
  expect(await sendCommand(src, ['CLUSTER', 'SETSLOT', slot, 'MIGRATING', await idOf(dst)])).toBe('OK');
}

export const migrate = (src: number, dst: number, key: string) => sendCommand(src, ['MIGRATE', '127.0.0.1', dst, key, 0, 5000]);

/** Moves one key, as `redis-cli --cluster reshard` does: one gone meanwhile (expired, deleted: NOKEY) is no failure. */
export async function moveKey(src: number, dst: number, key: string): Promise<void> {
  expect(String(await migrate(src, dst, key))).toMatch(/^(OK|NOKEY)$/);
}

/** Moves the slot's remaining keys, then gives the slot to `dst` on every primary. */
export async function finishMigration(cluster: RedisCluster, slot: number, src: number, dst: number): Promise<void> {
  for (;;) {
    const keys = (await sendCommand(src, ['CLUSTER', 'GETKEYSINSLOT', slot, 100])) as unknown as string[];
    if (keys.length === 0) break;
    for (const key of keys) await moveKey(src, dst, key);
  }
  const dstId = await idOf(dst);
  for (const n of cluster.nodes) expect(await sendCommand(n.port, ['CLUSTER', 'SETSLOT', slot, 'NODE', dstId])).toBe('OK');
}

/** Whether the primary on `port` serves `key`'s slot (the others answer MOVED). */
export async function servesKey(port: number, key: string): Promise<boolean> {
  return !((await sendCommand(port, ['EXISTS', key]).catch((e: Error) => e)) instanceof Error);
}

/** The index in `cluster.nodes` of the primary that serves `key`; -1 when none does. */
export async function primaryIndexOf(cluster: RedisCluster, key: string): Promise<number> {
  return (await Promise.all(cluster.nodes.map((n) => servesKey(n.port, key)))).indexOf(true);
}
