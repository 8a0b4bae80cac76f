/**
 * A starting node answers the gRPC health service NOT_SERVING until it has
 * joined the cluster (membership, leases, metrics): the chart's startup and
 * readiness probes ask it, so a pod gets no traffic before it can serve.
 */
import net from 'node:net';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { Membership } from '../../src/cluster/membership';
import { loadConfig } from '../../src/config';
import { ZdNode } from '../../src/node/node';
import { createLogger } from '../../src/util/logger';
import { freePort } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();

it('answers NOT_SERVING while it joins the cluster, SERVING once it runs', async () => {
  const port = await freePort();
  const config = loadConfig({
    env: {},
    overrides: {
      'redis.url': redis.url, 'redis.keyPrefix': uniquePrefix('boot'), 'api.listen': `127.0.0.1:${port}`, 'http.listen': '127.0.0.1:0',
      'metrics.listen': '127.0.0.1:0', 'internal.listen': '127.0.0.1:0', 'cluster.partitions': 8, 'auth.enabled': false,
    },
  });
  // Joining takes as long as this test says: the API already listens meanwhile.
  let join!: () => void;
  const joined = new Promise<void>((r) => (join = r));
  const real = Membership.prototype.start;
  const spy = jest.spyOn(Membership.prototype, 'start').mockImplementation(async function (this: Membership) {
    await joined;
    return real.call(this);
  });
  const channel = createChannel(`127.0.0.1:${port}`);
  const health = createClient(HealthDefinition, channel);
  const starting = ZdNode.start(config, { logger: createLogger('silent') });
  try {
    const status = await waitFor(() => health.check({ service: '' }).then((r) => r.status, () => undefined),
      { timeoutMs: 10_000, description: 'the API to answer' });
    expect(status).toBe(2); // NOT_SERVING
    join();
    const node = await starting;
    try {
      expect((await health.check({ service: '' })).status).toBe(1); // SERVING
    } finally {
      await node.close();
    }
  } finally {
    join();
    spy.mockRestore();
    channel.close();
  }
});

it('binds metrics.listen before it joins: a taken port fails the boot before its peers could see it as a member', async () => {
  // Bound last, a taken metrics port failed the boot only after the node had written
  // itself into the members and taken its share of the partitions from its peers.
  const port = await freePort();
  const taken = net.createServer();
  await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
  const prefix = uniquePrefix('boot');
  const config = loadConfig({
    env: {},
    overrides: {
      'redis.url': redis.url, 'redis.keyPrefix': prefix, 'api.listen': '127.0.0.1:0', 'http.listen': '127.0.0.1:0',
      'metrics.listen': `127.0.0.1:${port}`, 'internal.listen': '127.0.0.1:0', 'cluster.partitions': 8, 'auth.enabled': false,
    },
  });
  // ZADD is how a node writes itself into the members (its heartbeat); nothing else of a boot runs it.
  const zadds = async () => Number(/cmdstat_zadd:calls=(\d+)/.exec(String(await redis.command('INFO', 'commandstats')))?.[1] ?? 0);
  const before = await zadds();
  try {
    await expect(ZdNode.start(config, { logger: createLogger('silent') }))
      .rejects.toThrow(`config metrics.listen: cannot listen on 127.0.0.1:${port}: address already in use`);
  } finally {
    taken.close();
  }
  expect(await zadds()).toBe(before);
});
