/**
 * A real 3-primary Redis Cluster (startRedisCluster): slots spread over the
 * primaries, scripts within one hash tag, outcomes consumed from partitions on
 * every primary, and redis.waitReplicas waiting on the primary that holds a Step.
 */
import { Cluster, Redis } from 'ioredis';
import { ClientError, Status } from 'nice-grpc';
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { Membership } from '../../src/cluster/membership';
import { evictionPolicies } from '../../src/store/eviction-policy';
import { Keys, partitionOf } from '../../src/store/keys';
import { connectionEpoch, createRedis } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { uniquePrefix } from '../helpers/redis';

describe('startRedisCluster', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('reaches cluster_state:ok with 3 masters covering every slot', async () => {
    expect(cluster.nodes).toHaveLength(3);
    expect(cluster.seeds).toEqual(cluster.nodes.map((n) => `127.0.0.1:${n.port}`));
    for (const node of cluster.nodes) {
      const info = String(await sendCommand(node.port, ['CLUSTER', 'INFO']));
      expect(info).toContain('cluster_state:ok');
      expect(info).toContain('cluster_slots_assigned:16384');
      expect(info).toContain('cluster_known_nodes:3');
    }
  });

  it('serves keys of two slots on different primaries, and a multi-key script within one hash tag', async () => {
    const port = cluster.nodes[0]!.port;
    const [slotA, slotB] = [await sendCommand(port, ['CLUSTER', 'KEYSLOT', 'zd:{1}:x']), await sendCommand(port, ['CLUSTER', 'KEYSLOT', 'zd:{2}:x'])];
    expect(slotA).not.toBe(slotB);

    // A key that one node does not own gets MOVED: the slots really are spread.
    const owners = new Set<string>();
    for (let p = 0; p < 16; p++) {
      const replies = await Promise.all(cluster.nodes.map((n) => sendCommand(n.port, ['GET', `zd:{${p}}:probe`])));
      const owner = replies.findIndex((r) => !(r instanceof Error));
      expect(owner).toBeGreaterThanOrEqual(0);
      owners.add(String(owner));
    }
    expect(owners.size).toBeGreaterThan(1);

    const client = new Cluster(cluster.seeds.map((s) => ({ host: s.split(':')[0]!, port: Number(s.split(':')[1]) })), {
      lazyConnect: true,
    });
    try {
      await client.connect();
      await client.set('zd:{1}:a', 'one');
      await client.set('zd:{2}:a', 'two');
      expect(await client.get('zd:{1}:a')).toBe('one');
      expect(await client.get('zd:{2}:a')).toBe('two');
      // All keys of a partition share its hash tag, so a script may touch them together.
      const n = await client.eval("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])", 2, 'zd:{2}:b', 'zd:{2}:c', 'v');
      expect(n).toBe(1);
      await expect(client.eval("return redis.call('GET', KEYS[1])", 2, 'zd:{1}:a', 'zd:{2}:a')).rejects.toThrow(/CROSSSLOT/);
    } finally {
      client.disconnect();
    }
  });

  it('takes a leaving node out of the member set, a key without a hash tag', async () => {
    const client = createRedis({ url: '', clusterNodes: [...cluster.seeds], sentinels: [], sentinelName: '', password: '' });
    try {
      const keys = new Keys(uniquePrefix('members'));
      const self = new Membership(client, keys, { nodeId: 'n1', bootId: 'b1', address: 'n1:1', heartbeatMs: 60_000, nodeTtlMs: 10_000 }, systemClock, silentLogger);
      await self.beat();
      expect(await client.zscore(keys.members(), 'n1')).not.toBeNull();
      await self.leave();
      expect(await client.zscore(keys.members(), 'n1')).toBeNull();
    } finally {
      client.disconnect();
    }
  });

  it('reads the maxmemory-policy of every primary, so a node names the one that may evict', async () => {
    const client = createRedis({ url: '', clusterNodes: [...cluster.seeds], sentinels: [], sentinelName: '', password: '' });
    const evicting = cluster.nodes[1]!.port;
    await sendCommand(evicting, ['CONFIG', 'SET', 'maxmemory-policy', 'volatile-lru']);
    try {
      await client.ping();
      const policies = await evictionPolicies(client);
      expect(policies.map((p) => p.server).sort()).toEqual([...cluster.seeds].sort());
      expect(policies.filter((p) => p.policy !== 'noeviction')).toEqual([{ server: `127.0.0.1:${evicting}`, policy: 'volatile-lru' }]);
    } finally {
      await sendCommand(evicting, ['CONFIG', 'SET', 'maxmemory-policy', 'noeviction']);
      client.disconnect();
    }
  });

  it('delivers the outcomes of partitions on every primary to a consumer group (one read per partition: no stream shares a slot)', async () => {
    const t = await startTestNode('', uniquePrefix('orc'), { 'redis.clusterNodes': [...cluster.seeds] });
    try {
      const s = openSlot(t.worker, registerFrame());
      await s.nextOf('registered');
      await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 1 });
      const primaries = new Set<number>();
      const flows: string[] = [];
      for (let i = 0; primaries.size < 3 || flows.length < 6; i++) {
        const flow = `o${i}`;
        const tag = t.node.keys.tag(partitionOf('acme', flow, t.config.cluster.partitions));
        const replies = await Promise.all(cluster.nodes.map((n) => sendCommand(n.port, ['GET', `${tag}probe`])));
        primaries.add(replies.findIndex((r) => !(r instanceof Error)));
        flows.push(flow);
      }
      for (const flow of flows) {
        await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 's', step_execution_id: 'x' } });
        const task = (await s.nextOf('step_task')).step_task!;
        s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
        await s.nextOf('result_ack');
      }
      const seen = new Set<string>();
      for (let call = 0; call < 10 && seen.size < flows.length; call++) {
        const r = await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 100, wait_ms: 500 });
        for (const o of r.outcomes) seen.add(o.flow_id!);
      }
      expect([...seen].sort()).toEqual([...flows].sort());
      s.reset();
    } finally {
      await t.close();
    }
  }, 60_000);

  it('connects as redis.username with redis.password where the default user is off (Redis ACLs)', async () => {
    for (const n of cluster.nodes) {
      await sendCommand(n.port, ['ACL', 'SETUSER', 'zd', 'on', '>zd-secret', '~*', '&*', '+@all']);
      await sendCommand(n.port, ['ACL', 'SETUSER', 'default', 'off']);
    }
    try {
      expect(String(await sendCommand(cluster.nodes[0]!.port, ['PING']))).toMatch(/NOAUTH/); // the default user is refused
      const t = await startTestNode('', uniquePrefix('acl'), {
        'redis.clusterNodes': [...cluster.seeds], 'redis.username': 'zd', 'redis.password': 'zd-secret',
      });
      try {
        const s = openSlot(t.worker, registerFrame());
        await s.nextOf('registered');
        await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'acl', flow_type: 'order', step_type: 's', step_execution_id: 'x' } });
        const task = (await s.nextOf('step_task')).step_task!;
        s.send({ step_result: { task_token: task.task_token, output: Buffer.from('as zd') } });
        expect((await s.nextOf('result_ack')).result_ack).toBeDefined();
        s.reset();
      } finally {
        await t.close();
      }
    } finally {
      for (const n of cluster.nodes) {
        const admin = new Redis(n.port, '127.0.0.1', { username: 'zd', password: 'zd-secret', lazyConnect: true });
        await admin.call('ACL', 'SETUSER', 'default', 'on');
        admin.disconnect();
      }
    }
  }, 30_000);
});

describe('redis.waitReplicas on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let t: TestNode | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicaOf: [0] }); // only primary 0 has a replica
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  it('starts its replicas\' first sync at once: the embedded Cluster sets no diskless-sync delay', async () => {
    // redis-server waits 5 s by default before a diskless full sync; replicas are added one by one.
    for (const n of [...cluster.nodes, ...cluster.replicas]) {
      expect(await sendCommand(n.port, ['CONFIG', 'GET', 'repl-diskless-sync-delay'])).toEqual(['repl-diskless-sync-delay', '0']);
    }
  });

  it('waits on the primary that wrote the Step: acknowledged there, refused where no replica confirms', async () => {
    t = await startTestNode('', uniquePrefix('wrc'), { 'redis.clusterNodes': [...cluster.seeds], 'redis.waitReplicas': 1 });
    const node = t.node;
    const onPrimary0 = async (partition: number) =>
      !((await sendCommand(cluster.nodes[0]!.port, ['GET', `${node.keys.tag(partition)}probe`])) instanceof Error);
    const flows = { replicated: [] as string[], alone: [] as string[] };
    for (let i = 0; flows.replicated.length < 4 || flows.alone.length < 4; i++) {
      const flow = `f${i}`;
      (await onPrimary0(partitionOf('acme', flow, t!.config.cluster.partitions)) ? flows.replicated : flows.alone).push(flow);
    }
    const enqueue = (flow: string) => t!.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's' } });
    // Sent to a random primary, WAIT answered for the wrong one: some of these went either way.
    for (const flow of flows.replicated.slice(0, 4)) expect((await enqueue(flow)).created).toBe(true);
    for (const flow of flows.alone.slice(0, 4)) {
      const err = await enqueue(flow).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ClientError);
      expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
      expect((err as ClientError).details).toContain('redis.waitReplicas');
    }
  }, 60_000);

  it('answers the outcomes the primary with a replica holds, when they are all of one primary', async () => {
    t ??= await startTestNode('', uniquePrefix('wrc'), { 'redis.clusterNodes': [...cluster.seeds], 'redis.waitReplicas': 1 });
    const node = t.node;
    let flow = '';
    for (let i = 0; !flow; i++) {
      const p = partitionOf('acme', `o${i}`, t.config.cluster.partitions);
      if (!((await sendCommand(cluster.nodes[0]!.port, ['GET', `${node.keys.tag(p)}probe`])) instanceof Error)) flow = `o${i}`;
    }
    const consume = () => t!.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 3000 });
    expect((await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 0 })).outcomes).toEqual([]);
    const s = openSlot(t.worker, registerFrame({ flow_types: ['ship'] }));
    try {
      await s.nextOf('registered');
      const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flow, flow_type: 'ship', step_type: 'out', step_execution_id: 's' } });
      const task = (await s.nextOf('step_task')).step_task!;
      s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
      await s.nextOf('result_ack');
      // Its WAIT went to primary 0 alone; the connections it read over were the same throughout.
      expect((await consume()).outcomes.map((o) => o.task_id)).toEqual([r.task_id]);
      // WaitOutcome's mark and WAIT went there too (the primaries without a replica confirm nothing).
      expect((await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 0 })).outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
    } finally {
      s.reset();
    }
  }, 60_000);

  // Last: it fails primary 0 over to its replica.
  it('marks a write\'s connection as changed once its slot moves to another primary, so its WAIT is not trusted', async () => {
    const client = createRedis({ url: '', clusterNodes: [...cluster.seeds], sentinels: [], sentinelName: '', password: '' }) as Cluster;
    try {
      let key = '';
      for (let p = 0; !key; p++) {
        const k = `zd:{${p}}:probe`;
        if (!((await sendCommand(cluster.nodes[0]!.port, ['GET', k])) instanceof Error)) key = k;
      }
      await client.set(key, 'written'); // the slot map is loaded, the key is on primary 0
      const before = connectionEpoch(client, [key]);
      expect(connectionEpoch(client, [key])).toBe(before); // the same connections: the same mark

      // A failover between an enqueue's write and its WAIT: the WAIT would go to the new
      // primary, which confirms what it has, not the write (its replica has that at once).
      const replica = cluster.replicas[0]!;
      expect(await sendCommand(replica.port, ['CLUSTER', 'FAILOVER'])).toBe('OK');
      for (const until = Date.now() + 20_000; ;) {
        if (/role:master/.test(String(await sendCommand(replica.port, ['INFO', 'replication'])))) break;
        if (Date.now() > until) throw new Error('the replica did not take over');
        await new Promise((r) => setTimeout(r, 100));
      }
      // The client learns it as clients do: a MOVED on its next call there.
      for (const until = Date.now() + 10_000; client.slots[Number(await client.cluster('KEYSLOT', key))]?.[0] !== `127.0.0.1:${replica.port}`;) {
        expect(await client.get(key)).toBe('written');
        if (Date.now() > until) throw new Error('the client never saw the slot move');
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(connectionEpoch(client, [key])).not.toBe(before);
    } finally {
      client.disconnect();
    }
  }, 60_000);
});
