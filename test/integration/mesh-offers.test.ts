/**
 * Offers across the peer mesh (DESIGN §4): the offers an owner makes to one
 * peer in one event-loop turn travel as one OfferBatch call and are answered
 * one by one, in order; a peer of an older build (no OfferBatch) gets them
 * one call each. (Peers with PeerService.Link get them over it: mesh-link.test.ts.) Real gRPC on 127.0.0.1, real redis-server for membership.
 */
import { createServer, type Server } from 'nice-grpc';
import { Membership } from '../../src/cluster/membership';
import { Mesh, type MeshHandlers } from '../../src/cluster/mesh';
import type { OfferRef, OfferResult } from '../../src/owner/dispatcher';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { pb, PeerServiceDefinition } from '../../src/wire';
import { inertMeshHandlers } from '../helpers/mesh-handlers';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function ref(taskId: string): OfferRef {
  return { partition: 3, taskId, attempt: 0, tenant: 'acme', flowType: 'order', stepType: 'charge', readyAt: 1, path: 'queued' };
}

/** Registers `nodeId` at `address` in a real membership and returns a membership that sees it. */
async function membershipWith(prefix: string, peers: { nodeId: string; address: string }[]): Promise<Membership> {
  const client: RedisClient = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  cleanup.push(() => void client.disconnect());
  const keys = new Keys(prefix);
  for (const p of peers) {
    const m = new Membership(client, keys, { ...p, bootId: 'b1', heartbeatMs: 60_000, nodeTtlMs: 60_000 }, systemClock, silentLogger);
    await m.beat();
    m.stop();
  }
  const self = new Membership(client, keys, { nodeId: 'owner', bootId: 'b1', address: '', heartbeatMs: 60_000, nodeTtlMs: 60_000 }, systemClock, silentLogger);
  await self.beat();
  self.stop();
  return self;
}

const noHandlers = inertMeshHandlers();

/** A PeerService server of an older build (no Link) that counts calls; `batch: false`: no OfferBatch either. */
async function countingPeer(batch: boolean) {
  const calls = { offer: 0, offerBatch: [] as string[][] };
  const answer = (r: pb.IOfferRequest) => (r.ref?.task_id?.startsWith('gone') ? pb.OfferResult.GONE : pb.OfferResult.TAKEN);
  const server: Server = createServer();
  const ack = async () => ({});
  const { offerBatch, link: _link, heldAttempts: _held, ...single } = PeerServiceDefinition;
  const impl = {
    offer: async (req: pb.OfferRequest) => {
      calls.offer++;
      return { result: answer(req) };
    },
    capacity: ack, doorbell: ack, cancelAttempts: ack, invokeRpc: async () => ({}),
  };
  if (batch) {
    server.add({ ...single, offerBatch }, {
      ...impl,
      offerBatch: async (req: pb.OfferBatchRequest) => {
        calls.offerBatch.push(req.offers.map((o) => o.ref?.task_id ?? ''));
        return { results: req.offers.map(answer) };
      },
    });
  } else {
    server.add(single, impl);
  }
  const port = await server.listen('127.0.0.1:0');
  cleanup.push(() => server.forceShutdown());
  return { calls, address: `127.0.0.1:${port}` };
}

async function ownerMesh(peers: { nodeId: string; address: string }[]): Promise<Mesh> {
  const membership = await membershipWith(uniquePrefix('mesh'), peers);
  const mesh = new Mesh('owner', membership, noHandlers, silentLogger);
  cleanup.push(() => mesh.close());
  return mesh;
}

it('sends the offers of one turn to a peer as one OfferBatch call and answers each in order', async () => {
  const peer = await countingPeer(true);
  const mesh = await ownerMesh([{ nodeId: 'gw', address: peer.address }]);
  const ids = ['t1', 'gone-2', 't3', 't4', 'gone-5'];
  const results = await Promise.all(ids.map((id) => mesh.offer('gw', ref(id), 7)));
  expect(results).toEqual(['taken', 'gone', 'taken', 'taken', 'gone']);
  expect(peer.calls.offerBatch).toEqual([ids]);
  expect(peer.calls.offer).toBe(0);

  // The next turn is the next call.
  expect(await mesh.offer('gw', ref('t6'), 7)).toBe('taken');
  await Promise.all([mesh.offer('gw', ref('t7'), 7), mesh.offer('gw', ref('t8'), 7)]);
  expect(peer.calls.offerBatch).toEqual([ids, ['t7', 't8']]);
  expect(peer.calls.offer).toBe(1);
});

it('falls back to one Offer call per offer for a peer without OfferBatch, and remembers it', async () => {
  const peer = await countingPeer(false);
  const mesh = await ownerMesh([{ nodeId: 'old', address: peer.address }]);
  expect(await Promise.all(['a', 'gone-b', 'c'].map((id) => mesh.offer('old', ref(id), 1)))).toEqual(['taken', 'gone', 'taken']);
  expect(peer.calls.offer).toBe(3);
  expect(await Promise.all(['d', 'e'].map((id) => mesh.offer('old', ref(id), 1)))).toEqual(['taken', 'taken']);
  expect(peer.calls.offer).toBe(5);
});

it('a receiving mesh answers a batch offer by offer: a failed one fails alone', async () => {
  const seen: string[] = [];
  const gwHandlers: MeshHandlers = {
    ...noHandlers,
    offer: (r: OfferRef): Promise<OfferResult> => {
      seen.push(`${r.taskId}@${r.partition}/${r.stepType}/${r.path}`);
      if (r.taskId === 'boom') return Promise.reject(new Error('redis went away'));
      return Promise.resolve(r.taskId === 'full' ? 'no-slot' : 'taken');
    },
  };
  const prefix = uniquePrefix('mesh');
  const gwMembership = await membershipWith(prefix, []);
  const gw = new Mesh('gw', gwMembership, gwHandlers, silentLogger);
  cleanup.push(() => gw.close());
  const port = await gw.listen('127.0.0.1:0', 1 << 20);
  const mesh = await ownerMesh([{ nodeId: 'gw', address: `127.0.0.1:${port}` }]);

  const settled = await Promise.allSettled(['ok', 'boom', 'full'].map((id) => mesh.offer('gw', ref(id), 2)));
  expect(settled[0]).toEqual({ status: 'fulfilled', value: 'taken' });
  expect(settled[1]!.status).toBe('rejected');
  expect(String((settled[1] as PromiseRejectedResult).reason)).toMatch(/could not take offer 2 of 3/);
  expect(settled[2]).toEqual({ status: 'fulfilled', value: 'no-slot' });
  expect(seen).toEqual(['ok@3/charge/queued', 'boom@3/charge/queued', 'full@3/charge/queued']);
});

it('an offer to a node that is not a live member is no-slot, with no call made', async () => {
  const peer = await countingPeer(true);
  const mesh = await ownerMesh([{ nodeId: 'gw', address: peer.address }]);
  expect(await mesh.offer('ghost', ref('t1'), 1)).toBe('no-slot');
  expect(peer.calls.offerBatch).toEqual([]);
  expect(peer.calls.offer).toBe(0);
});

it('gives up one-way calls (capacity, doorbell, cancel) to a peer that never answers them', async () => {
  // Guards: a frozen peer keeps its TCP connection, and each call and its message
  // was held for as long as it stayed frozen (closing the channel ends no call made).
  const ended: Record<string, number> = { capacity: 0, doorbell: 0, cancelAttempts: 0 };
  const started: Record<string, number> = { capacity: 0, doorbell: 0, cancelAttempts: 0 };
  const never = (name: string) => (_req: unknown, ctx: { signal: AbortSignal }) => new Promise<never>((_resolve, reject) => {
    started[name]!++;
    ctx.signal.addEventListener('abort', () => {
      ended[name]!++;
      reject(new Error('aborted'));
    }, { once: true });
  });
  const server: Server = createServer();
  const { offerBatch: _b, link: _l, heldAttempts: _h, ...single } = PeerServiceDefinition;
  server.add(single, {
    offer: async () => ({ result: pb.OfferResult.NO_SLOT }), invokeRpc: async () => ({}),
    capacity: never('capacity'), doorbell: never('doorbell'), cancelAttempts: never('cancelAttempts'),
  });
  const port = await server.listen('127.0.0.1:0');
  cleanup.push(() => server.forceShutdown());
  const mesh = await ownerMesh([{ nodeId: 'frozen', address: `127.0.0.1:${port}` }]);

  mesh.capacityChanged();
  mesh.ring('frozen', { kind: pb.DoorbellEvent.Kind.OUTCOME, partition: 1, task_id: 't' });
  mesh.cancelAttempts('frozen', [{ task_id: 't', attempt: 1, nonce: 'n', stream_id: 's' }], 'test');
  await waitFor(() => started.capacity! > 0 && started.doorbell! > 0 && started.cancelAttempts! > 0, { timeoutMs: 5000, description: 'each call reached the peer' });
  await waitFor(() => ended.capacity! > 0 && ended.doorbell! > 0 && ended.cancelAttempts! > 0, { timeoutMs: 10_000, description: 'each call given up' });
}, 20_000);
