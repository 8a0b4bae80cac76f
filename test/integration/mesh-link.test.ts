/**
 * PeerService.Link (src/cluster/peer-link.ts): a node's capacity snapshots,
 * doorbells and offer batches to a peer travel over one long-lived stream, no
 * unary call each. A peer of an older build (no Link) gets unary calls, and
 * what was written before its UNIMPLEMENTED came back is sent again, not lost.
 * A link that breaks fails its unanswered offers at once. Real gRPC on
 * 127.0.0.1, real redis-server for membership.
 */
import { connectivityState as ConnectivityState } from '@grpc/grpc-js';
import { createChannel, createClient, createServer, type Server } from 'nice-grpc';
import { Membership } from '../../src/cluster/membership';
import { Mesh } from '../../src/cluster/mesh';
import { MAX_QUEUED_BELL_EVENTS } from '../../src/cluster/link-outbox';
import { LinkServer, PeerLink } from '../../src/cluster/peer-link';
import type { OfferRef } from '../../src/owner/dispatcher';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { pb, PeerServiceDefinition } from '../../src/wire';
import { inertMeshHandlers } from '../helpers/mesh-handlers';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { tcpProxy } from '../helpers/tcp-proxy';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const ref = (taskId: string): OfferRef =>
  ({ partition: 3, taskId, attempt: 0, tenant: 'acme', flowType: 'order', stepType: 'charge', readyAt: 1, path: 'queued' });

const snapshot = { entries: [{ tenant: 'acme', flow_type: 'order', idle_step_slots: 4 }], workers: [], declined: [] };
const handlers = inertMeshHandlers(snapshot);

/** An owner mesh whose membership sees `gw` at `address`. */
async function ownerMesh(address: string, h = handlers): Promise<Mesh> {
  return (await ownerMeshWithMembers(address, h)).mesh;
}

/** ownerMesh, with the two memberships, for a test that changes who is live. */
async function ownerMeshWithMembers(address: string, h = handlers): Promise<{ mesh: Mesh; gw: Membership; self: Membership }> {
  const client: RedisClient = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  cleanup.push(() => void client.disconnect());
  const keys = new Keys(uniquePrefix('link'));
  const gw = new Membership(client, keys, { nodeId: 'gw', address, bootId: 'b1', heartbeatMs: 60_000, nodeTtlMs: 60_000 }, systemClock, silentLogger);
  await gw.beat();
  gw.stop();
  const self = new Membership(client, keys, { nodeId: 'owner', bootId: 'b1', address: '', heartbeatMs: 60_000, nodeTtlMs: 60_000 }, systemClock, silentLogger);
  await self.beat();
  self.stop();
  const mesh = new Mesh('owner', self, h, silentLogger);
  cleanup.push(() => mesh.close());
  return { mesh, gw, self };
}

async function recordingPeer(link: boolean, port = 0) {
  const seen = { unary: [] as string[], link: [] as string[], doorbells: [] as string[], capacity: 0, lastCapacity: undefined as pb.ICapacityUpdate | undefined };
  const answer = (o: pb.IOfferRequest) => (o.ref?.task_id?.startsWith('gone') ? pb.OfferResult.GONE : pb.OfferResult.TAKEN);
  const bells = (events: pb.IDoorbellEvent[]) => seen.doorbells.push(...events.map((e) => e.task_id ?? ''));
  const linkServer = new LinkServer({
    capacity: (update) => {
      seen.link.push('capacity');
      seen.capacity++;
      seen.lastCapacity = update;
    },
    doorbell: (events) => {
      seen.link.push('doorbell');
      bells(events);
    },
    offerBatch: async (req) => {
      seen.link.push('offers');
      return { results: (req.offers ?? []).map(answer) };
    },
  }, silentLogger);
  const { link: linkMethod, heldAttempts: _held, ...unaryOnly } = PeerServiceDefinition;
  const impl = {
    offer: async (req: pb.OfferRequest) => {
      seen.unary.push('offer');
      return { result: answer(req) };
    },
    offerBatch: async (req: pb.OfferBatchRequest) => {
      seen.unary.push('offers');
      return { results: req.offers.map(answer) };
    },
    capacity: async () => {
      seen.unary.push('capacity');
      seen.capacity++;
      return {};
    },
    doorbell: async (req: pb.DoorbellRequest) => {
      seen.unary.push('doorbell');
      bells(req.events);
      return {};
    },
    cancelAttempts: async () => ({}),
    invokeRpc: async () => ({}),
  };
  const server: Server = createServer();
  if (link) server.add({ ...unaryOnly, link: linkMethod }, { ...impl, link: linkServer.handler() });
  else server.add(unaryOnly, impl);
  const bound = await server.listen(`127.0.0.1:${port}`);
  cleanup.push(() => server.forceShutdown());
  return { seen, server, linkServer, address: `127.0.0.1:${bound}`, port: bound };
}

it('sends capacity, doorbells and offer batches to a peer over its link, with no unary call', async () => {
  const peer = await recordingPeer(true);
  const mesh = await ownerMesh(peer.address);
  mesh.ring('gw', { kind: pb.DoorbellEvent.Kind.READY, partition: 3, task_id: 'bell-1' });
  mesh.capacityChanged();
  expect(await Promise.all(['t1', 'gone-2', 't3'].map((id) => mesh.offer('gw', ref(id), 1)))).toEqual(['taken', 'gone', 'taken']);
  await waitFor(() => peer.seen.doorbells.length === 1 && peer.seen.capacity === 1, { timeoutMs: 3000 });
  mesh.ring('gw', { kind: pb.DoorbellEvent.Kind.READY, partition: 3, task_id: 'bell-2' });
  expect(await Promise.all(['t4', 't5'].map((id) => mesh.offer('gw', ref(id), 1)))).toEqual(['taken', 'taken']);
  await waitFor(() => peer.seen.doorbells.length === 2, { timeoutMs: 3000 });
  expect(peer.seen.doorbells).toEqual(['bell-1', 'bell-2']);
  expect(peer.seen.unary).toEqual([]);
  expect(peer.seen.link.filter((m) => m === 'offers')).toHaveLength(2);
  // dexzd_mesh_peer_links reads these: one link out of the owner, one into the peer
  expect(mesh.linkCounts()).toEqual({ outbound: 1, inbound: 0 });
  expect(peer.linkServer.size).toBe(1);
});

it('falls back to unary calls for a peer without Link, resending what was written before it said so', async () => {
  const peer = await recordingPeer(false);
  const mesh = await ownerMesh(peer.address);
  // written to a fresh link at once, before the peer's UNIMPLEMENTED can come back
  mesh.ring('gw', { kind: pb.DoorbellEvent.Kind.READY, partition: 3, task_id: 'early' });
  mesh.capacityChanged();
  expect(await Promise.all(['t1', 't2'].map((id) => mesh.offer('gw', ref(id), 1)))).toEqual(['taken', 'taken']);
  await waitFor(() => peer.seen.doorbells.includes('early') && peer.seen.capacity >= 1, { timeoutMs: 3000 });
  // later messages go as unary calls from the start
  mesh.ring('gw', { kind: pb.DoorbellEvent.Kind.READY, partition: 3, task_id: 'late' });
  expect(await mesh.offer('gw', ref('t3'), 1)).toBe('taken');
  await waitFor(() => peer.seen.doorbells.includes('late'), { timeoutMs: 3000 });
  expect(peer.seen.doorbells).toEqual(['early', 'late']);
  expect(peer.seen.unary.filter((m) => m === 'doorbell')).toHaveLength(2);
  expect(peer.seen.link).toEqual([]);
});

it('dials a link to a new boot of a peer at the same address, though the boot before it had no Link', async () => {
  const old = await recordingPeer(false);
  const client: RedisClient = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  cleanup.push(() => void client.disconnect());
  const keys = new Keys(uniquePrefix('link-reboot'));
  const boot = async (bootId: string) => {
    const gw = new Membership(client, keys, { nodeId: 'gw', address: old.address, bootId, heartbeatMs: 60_000, nodeTtlMs: 60_000 }, systemClock, silentLogger);
    await gw.beat();
    gw.stop();
  };
  await boot('b1');
  const self = new Membership(client, keys, { nodeId: 'owner', bootId: 'b1', address: '', heartbeatMs: 60_000, nodeTtlMs: 60_000 }, systemClock, silentLogger);
  await self.beat();
  const mesh = new Mesh('owner', self, handlers, silentLogger);
  cleanup.push(() => mesh.close());
  cleanup.push(() => self.stop());
  expect(await Promise.all(['t1', 't2'].map((id) => mesh.offer('gw', ref(id), 1)))).toEqual(['taken', 'taken']);
  expect(await mesh.offer('gw', ref('t3'), 1)).toBe('taken');
  expect(old.seen.unary).toContain('offer');

  // The peer restarts on a newer build at the same address, within nodeTtl.
  await old.server.shutdown();
  const upgraded = await recordingPeer(true, old.port);
  await boot('b2');
  await self.beat();
  expect(await Promise.all(['t4', 't5'].map((id) => mesh.offer('gw', ref(id), 1)))).toEqual(['taken', 'taken']);
  expect(upgraded.seen.link).toContain('offers');
  expect(upgraded.seen.unary).toEqual([]);
});

it('sends the notices queued for a peer when the mesh closes: a Step enqueued in its last milliseconds reaches the owner', async () => {
  const peer = await recordingPeer(true);
  const mesh = await ownerMesh(peer.address);
  // The link is up and served, as a running node's link to its peer is.
  expect(await Promise.all(['w1', 'w2'].map((id) => mesh.offer('gw', ref(id), 1)))).toEqual(['taken', 'taken']);
  // Rung within the notices' coalescing delay of the close: still queued when it comes.
  mesh.ring('gw', { kind: pb.DoorbellEvent.Kind.READY, partition: 3, task_id: 'last' });
  await mesh.close();
  await waitFor(() => peer.seen.doorbells.includes('last'), { timeoutMs: 3000, description: 'the peer hears the last notice' });
});

it.each([
  ['a peer it has no link to yet', true],
  ['a peer of an older build (no Link)', false],
])('sends the notices queued for %s when the mesh closes, and waits for them', async (_what, link) => {
  const peer = await recordingPeer(link);
  const mesh = await ownerMesh(peer.address);
  // Nothing sent to the peer before: its channel has not connected. A link dialled now, or a unary
  // call the channel's close fails before it connects, lost the notice.
  mesh.ring('gw', { kind: pb.DoorbellEvent.Kind.READY, partition: 3, task_id: 'last' });
  await mesh.close();
  expect(peer.seen.doorbells).toEqual(['last']);
  expect(peer.seen.unary).toEqual(['doorbell']);
});

it('answers the offers a peer read before the owner closed its link: they are taken, not failed', async () => {
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  let read = 0;
  const linkServer = new LinkServer({
    capacity: () => undefined,
    doorbell: () => undefined,
    offerBatch: async (req) => {
      read += req.offers?.length ?? 0;
      await held;
      return { results: (req.offers ?? []).map(() => pb.OfferResult.TAKEN) };
    },
  }, silentLogger);
  const server = createServer();
  server.add({ link: PeerServiceDefinition.link }, { link: linkServer.handler() });
  const port = await server.listen('127.0.0.1:0');
  cleanup.push(() => server.forceShutdown());
  const mesh = await ownerMesh(`127.0.0.1:${port}`);
  const offers = Promise.allSettled(['a', 'b'].map((id) => mesh.offer('gw', ref(id), 1)));
  await waitFor(() => read === 2, { timeoutMs: 3000, description: 'the peer reads the offer batch' });
  // The owner stops (its mesh closes) while the peer still runs the batch.
  await mesh.close();
  await sleep(200); // the end of the owner's side reaches the peer before its answer is ready
  release();
  expect((await offers).map((r) => (r.status === 'fulfilled' ? r.value : 'failed'))).toEqual(['taken', 'taken']);
});

it('hands back nothing the peer confirmed when a served link ends: what the peer read is its own', async () => {
  const peer = await recordingPeer(true);
  const channel = createChannel(peer.address);
  cleanup.push(() => channel.close());
  let served = false;
  let link: PeerLink | undefined;
  const ended = new Promise<pb.ILinkFrame[]>((resolve) => {
    link = new PeerLink(createClient(PeerServiceDefinition, channel), 2000, (_unimplemented, unsent) => resolve(unsent), silentLogger, () => (served = true));
  });
  link!.send({ doorbell: { from_node_id: 'owner', events: [{ task_id: 'read-1' }] } });
  await waitFor(() => served && peer.seen.doorbells.includes('read-1'), { timeoutMs: 3000, description: 'the link served and the notice read' });
  link!.send({ doorbell: { from_node_id: 'owner', events: [{ task_id: 'read-2' }] } });
  await waitFor(() => peer.seen.doorbells.includes('read-2'), { timeoutMs: 3000, description: 'the second notice read' });
  peer.linkServer.closeAll();
  expect(await ended).toEqual([]);
});

it('fails an offer batch the peer read when a served link ends before its answer, and hands it back to no one: the peer may have run it', async () => {
  let read = 0;
  const linkServer = new LinkServer({ capacity: () => undefined, doorbell: () => undefined, offerBatch: () => {
    read++;
    return new Promise<pb.IOfferBatchResponse>(() => undefined); // never answered
  } }, silentLogger);
  const server: Server = createServer();
  server.add({ link: PeerServiceDefinition.link }, { link: linkServer.handler() });
  const port = await server.listen('127.0.0.1:0');
  cleanup.push(() => server.forceShutdown());
  const channel = createChannel(`127.0.0.1:${port}`);
  cleanup.push(() => channel.close());
  let link: PeerLink | undefined;
  const ended = new Promise<unknown[]>((resolve) => {
    link = new PeerLink(createClient(PeerServiceDefinition, channel), 5000, (_unimplemented, _unsent, batches) => resolve(batches), silentLogger);
  });
  const offered = link!.offers({ offers: [{ ref: { task_id: 't1' }, owner_node_id: 'owner', epoch: 1 }] });
  offered.catch(() => undefined);
  await waitFor(() => read === 1, { timeoutMs: 3000, description: 'the peer read the batch' });
  linkServer.closeAll();
  expect(await ended).toEqual([]);
  await expect(offered).rejects.toThrow(/ended before the offer batch was answered/);
});

it('fails the unanswered offers of a link that breaks, at once', async () => {
  const peer = await recordingPeer(true);
  const mesh = await ownerMesh(peer.address);
  expect(await mesh.offer('gw', ref('warm'), 1)).toBe('taken'); // the link is up
  peer.server.forceShutdown();
  const t0 = Date.now();
  const settled = await Promise.allSettled([mesh.offer('gw', ref('a'), 1), mesh.offer('gw', ref('b'), 1)]);
  expect(settled.every((r) => r.status === 'rejected')).toBe(true);
  expect(Date.now() - t0).toBeLessThan(1500); // not the 2 s offer timeout
});

it('hands back the one-way frames an older peer never confirmed, with the reason', async () => {
  const peer = await recordingPeer(false);
  const channel = createChannel(peer.address);
  cleanup.push(() => channel.close());
  const ended = new Promise<{ unimplemented: boolean; unsent: pb.ILinkFrame[] }>((resolve) => {
    const link = new PeerLink(createClient(PeerServiceDefinition, channel), 2000, (unimplemented, unsent) => resolve({ unimplemented, unsent }), silentLogger);
    link.send({ capacity: { node_id: 'owner', seq: 1 } });
    link.send({ doorbell: { from_node_id: 'owner', events: [{ task_id: 'x' }] } });
  });
  const { unimplemented, unsent } = await ended;
  expect(unimplemented).toBe(true);
  expect(unsent.map((f) => (f.capacity ? 'capacity' : f.doorbell ? 'doorbell' : '?'))).toEqual(['capacity', 'doorbell']);
});

it('coalesces a burst of capacity changes into one snapshot a few ms later, taken when it is sent', async () => {
  // DESIGN §4: each gateway tells every peer, coalesced (a few ms), its idle slots.
  let idle = 0;
  const counting = { ...handlers, capacitySnapshot: () => ({ ...snapshot, entries: [{ tenant: 'acme', flow_type: 'order', idle_step_slots: idle }] }) };
  const peer = await recordingPeer(true);
  const mesh = await ownerMesh(peer.address, counting);
  mesh.capacityChanged(); // the link is up once the first snapshot came
  await waitFor(() => peer.seen.capacity === 1, { timeoutMs: 3000 });
  const since = Date.now();
  for (let i = 1; i <= 50; i++) {
    idle = i; // every slot of a burst turning idle says so
    mesh.capacityChanged();
  }
  await waitFor(() => peer.seen.capacity === 2, { timeoutMs: 3000 });
  // Not left to the periodic refresh, which sends no sooner than 1 s after the last snapshot;
  // the margin is for a loaded runner.
  expect(Date.now() - since).toBeLessThan(600);
  await sleep(100);
  expect(peer.seen.capacity).toBe(2);
  expect(peer.seen.lastCapacity?.entries).toEqual([expect.objectContaining({ idle_step_slots: 50 })]);
});

it('arms no capacity timer while the node has no peer, and sends a peer that joins a snapshot', async () => {
  const client: RedisClient = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  cleanup.push(() => void client.disconnect());
  const keys = new Keys(uniquePrefix('solo'));
  const self = new Membership(client, keys, { nodeId: 'solo', bootId: 'b1', address: '', heartbeatMs: 60_000, nodeTtlMs: 60_000 }, systemClock, silentLogger);
  await self.beat();
  self.stop();
  const mesh = new Mesh('solo', self, handlers, silentLogger);
  cleanup.push(() => mesh.close());
  expect(self.liveIds()).toEqual(['solo']);
  // Every slot that turns busy or idle says so: alone, that must not wake the node 10 ms later.
  mesh.capacityChanged();
  expect((mesh as unknown as { capacityTimer?: NodeJS.Timeout }).capacityTimer).toBeUndefined();

  const peer = await recordingPeer(true);
  const gw = new Membership(client, keys, { nodeId: 'gw', address: peer.address, bootId: 'b1', heartbeatMs: 60_000, nodeTtlMs: 60_000 }, systemClock, silentLogger);
  await gw.beat();
  gw.stop();
  await self.beat();
  mesh.membersChanged([...self.liveIds()]);
  await waitFor(() => peer.seen.capacity === 1, { timeoutMs: 3000 });
});

it('drops the link and channel to a peer that left the members, and holds no entry for it', async () => {
  const peer = await recordingPeer(true);
  const { mesh, gw, self } = await ownerMeshWithMembers(peer.address);
  mesh.capacityChanged();
  await waitFor(() => peer.seen.capacity === 1 && peer.linkServer.size === 1, { timeoutMs: 3000 });
  const clients = (mesh as unknown as { clients: Map<string, { channel: { getConnectivityState(connect: boolean): ConnectivityState } }> }).clients;
  const channel = clients.get('gw')!.channel;

  await gw.leave();
  await self.beat();
  expect(self.liveIds()).toEqual(['owner']);
  mesh.membersChanged([...self.liveIds()]);
  expect(clients.has('gw')).toBe(false);
  expect(channel.getConnectivityState(false)).toBe(ConnectivityState.SHUTDOWN);
  await waitFor(() => peer.linkServer.size === 0, { timeoutMs: 3000, description: 'the peer\'s end of the link closed' });
});

describe('a peer that stops reading its link', () => {
  /** A Link server behind a proxy that can freeze: paused, the stream's flow-control window fills. */
  async function freezablePeer() {
    const seen = { capacitySeqs: [] as number[], bells: [] as string[] };
    const server: Server = createServer();
    server.add({ link: PeerServiceDefinition.link }, {
      async *link(requests: AsyncIterable<pb.LinkFrame>) {
        yield { hello: {} };
        for await (const f of requests) {
          if (f.capacity) seen.capacitySeqs.push(Number(f.capacity.seq));
          for (const e of f.doorbell?.events ?? []) seen.bells.push(e.task_id ?? '');
        }
      },
    });
    const port = await server.listen('127.0.0.1:0');
    cleanup.push(() => server.forceShutdown());
    const proxy = await tcpProxy(port);
    cleanup.push(() => proxy.close());
    const channel = createChannel(`127.0.0.1:${proxy.port}`);
    cleanup.push(() => channel.close());
    const link = new PeerLink(createClient(PeerServiceDefinition, channel), 2000, () => undefined, silentLogger);
    cleanup.push(() => link.close());
    // The link is served before the peer freezes.
    link.send({ capacity: { node_id: 'owner', seq: 0 } });
    await waitFor(() => seen.capacitySeqs.length === 1, { timeoutMs: 3000 });
    proxy.pause();
    return { seen, proxy, link };
  }

  // A snapshot as big as a busy node's: a few KB, so the stream's window fills fast.
  const bigSnapshot = (seq: number): pb.ICapacityUpdate => ({
    node_id: 'owner', seq,
    entries: Array.from({ length: 100 }, (_, i) => ({ tenant: 'acme', flow_type: `flow-${i}`, idle_step_slots: i })),
  });
  const turn = () => new Promise((r) => setImmediate(r));

  /**
   * Sends snapshots a few per event-loop turn, as a busy node does, until the
   * stream has taken nothing for 20 turns (socket buffers hold a few MB first).
   * Returns the last seq sent.
   */
  async function fillWindow(link: PeerLink): Promise<number> {
    let seq = 0;
    for (let stalledTurns = 0; stalledTurns < 20 && seq < 50_000;) {
      for (let i = 0; i < 5; i++) link.send({ capacity: bigSnapshot(++seq) });
      await turn();
      stalledTurns = link.backlog.frames > 0 ? stalledTurns + 1 : 0;
    }
    expect(link.backlog.frames).toBe(1);
    return seq;
  }

  it('keeps one capacity snapshot queued, the newest, however many it is sent', async () => {
    const { seen, proxy, link } = await freezablePeer();
    const stalledAt = await fillWindow(link);
    const more = 5000;
    let most = 0;
    for (let i = 1; i <= more; i++) {
      link.send({ capacity: bigSnapshot(stalledAt + i) });
      if (i % 5 === 0) await turn();
      most = Math.max(most, link.backlog.frames);
    }
    expect(most).toBe(1);
    proxy.resume();
    const last = stalledAt + more;
    await waitFor(() => seen.capacitySeqs.at(-1) === last, { timeoutMs: 5000 });
    // Of the snapshots sent while the peer was frozen, only the newest reaches it.
    expect(seen.capacitySeqs.filter((s) => s > stalledAt)).toEqual([last]);
    expect(seen.capacitySeqs).toEqual([...seen.capacitySeqs].sort((x, y) => x - y));
  });

  it('merges doorbell notices into one queued frame and drops the oldest past its bound', async () => {
    const { seen, proxy, link } = await freezablePeer();
    await fillWindow(link);
    const total = MAX_QUEUED_BELL_EVENTS + 1000;
    for (let i = 0; i < total; i++) {
      link.send({ doorbell: { from_node_id: 'owner', events: [{ kind: pb.DoorbellEvent.Kind.READY, partition: 1, task_id: `t${i}` }] } });
      if (i % 500 === 0) await turn();
    }
    expect(link.backlog).toEqual({ frames: 2, droppedBellEvents: total - MAX_QUEUED_BELL_EVENTS });
    proxy.resume();
    await waitFor(() => seen.bells.includes(`t${total - 1}`), { timeoutMs: 5000 });
    // The newest notices all arrive, in order; the oldest were dropped.
    expect(seen.bells).toEqual(Array.from({ length: MAX_QUEUED_BELL_EVENTS }, (_, i) => `t${total - MAX_QUEUED_BELL_EVENTS + i}`));
  });
});

it('ends the links of peers that went silent without closing them (a host gone, a black-holing network)', async () => {
  // Guards the mesh server's keepalive: without it nothing ended a link whose peer vanished
  // without a FIN, and the link, its HTTP/2 session and the inbound gauge stayed for good.
  const alone = { liveIds: () => [], get: () => undefined, beat: async () => undefined } as unknown as Membership;
  const served = new Mesh('gw', alone, handlers, silentLogger);
  cleanup.push(() => served.close());
  const port = await served.listen('127.0.0.1:0', 1 << 20, 200);
  const links: PeerLink[] = [];
  for (let i = 0; i < 3; i++) {
    const proxy = await tcpProxy(port);
    cleanup.push(() => proxy.close());
    const channel = createChannel(`127.0.0.1:${proxy.port}`, undefined, { 'grpc.use_local_subchannel_pool': 1 });
    cleanup.push(() => channel.close());
    const link = new PeerLink(createClient(PeerServiceDefinition, channel), 2000, () => undefined, silentLogger);
    links.push(link);
    link.send({ capacity: { node_id: `peer-${i}`, seq: 1 } });
    await waitFor(() => served.linkCounts().inbound === i + 1, { timeoutMs: 3000 });
    proxy.freeze(); // the peer says nothing from now on, and closes nothing
  }
  await waitFor(() => served.linkCounts().inbound === 0, { timeoutMs: 5000 });
  for (const l of links) l.close();
});
