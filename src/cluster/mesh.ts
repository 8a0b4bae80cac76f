/**
 * The internal peer mesh (DESIGN §1, §4): a PeerService server on
 * internal.listen and a client per live peer. Offers and RPC routing are
 * request/reply; capacity snapshots and doorbells are coalesced one-way
 * messages whose loss costs only latency (safety never rests on them).
 * A message to oneself is a local call.
 */
import { ChannelCredentials, ServerCredentials } from '@grpc/grpc-js';
import { createChannel, createClient, createServer, type Channel, type Server } from 'nice-grpc';
import type { OfferRef, OfferResult } from '../owner/dispatcher';
import type { Logger } from '../util/logger';
import { pb, PeerServiceDefinition } from '../wire';
import type { Membership } from './membership';

/** No channelz bookkeeping: nothing reads it, and grpc-js pays for it on every call and message. */
const NO_CHANNELZ = { 'grpc.enable_channelz': 0 };

export interface MeshHandlers {
  offer(ref: OfferRef): Promise<OfferResult>;
  capacity(update: pb.ICapacityUpdate): void;
  doorbell(events: pb.IDoorbellEvent[], from: string): void;
  cancelAttempts(attempts: pb.ICancelledAttemptRef[], reason: string): void;
  invokeRpc(req: pb.InvokeRpcRequest, signal: AbortSignal): Promise<pb.IInvokeRpcResponse>;
  capacitySnapshot(): Omit<pb.ICapacityUpdate, 'node_id' | 'seq'>;
}

/** TLS of the peer mesh (issue 7): with `ca`, mutual — peers must present a certificate `ca` signed. */
export interface MeshTls {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

type PeerClient = ReturnType<typeof createClient<typeof PeerServiceDefinition>>;

/**
 * Coalescing delays. Each peer message is a unary call (a new HTTP/2 stream),
 * which costs far more than the data in it: at 2 ms, capacity snapshots and
 * outcome bells made a 3-node cluster slower per Step than one node. 10 ms
 * measured 20-70 % more Steps/s on 3 nodes; an owner's view of remote
 * capacity is at most that much staler (a stale reservation bounces as
 * no-slot and is offered again). Doorbells carry READY notices, so they wait
 * less.
 */
const CAPACITY_COALESCE_MS = 10;
const BELL_COALESCE_MS = 5;
const OFFER_TIMEOUT_MS = 2000;

export class Mesh {
  private server: Server | undefined;
  private readonly clients = new Map<string, { address: string; channel: Channel; client: PeerClient }>();
  private capacityTimer: NodeJS.Timeout | undefined;
  private capacitySeq = Date.now() * 1000;
  private readonly pendingBells = new Map<string, pb.IDoorbellEvent[]>();
  private bellTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Set before listen(); plaintext when unset. */
  tls: MeshTls | undefined;

  constructor(
    private readonly nodeId: string,
    private readonly membership: Membership,
    private readonly handlers: MeshHandlers,
    private readonly log: Logger,
  ) {}

  /** Starts the PeerService listener; returns the bound port. */
  async listen(address: string, maxMessageBytes: number): Promise<number> {
    const h = this.handlers;
    const server = createServer({ 'grpc.max_receive_message_length': maxMessageBytes, ...NO_CHANNELZ });
    server.add(PeerServiceDefinition, {
      offer: async (req: pb.OfferRequest) => ({ result: toWireResult(await h.offer(fromWireRef(req.ref))) }),
      capacity: async (req: pb.CapacityUpdate) => {
        h.capacity(req);
        return {};
      },
      doorbell: async (req: pb.DoorbellRequest) => {
        h.doorbell(req.events, req.from_node_id);
        return {};
      },
      cancelAttempts: async (req: pb.CancelAttemptsRequest) => {
        h.cancelAttempts(req.attempts, req.reason);
        return {};
      },
      invokeRpc: (req: pb.InvokeRpcRequest, ctx) => h.invokeRpc(req, ctx.signal),
    });
    this.server = server;
    const t = this.tls;
    return server.listen(address, t
      ? ServerCredentials.createSsl(t.ca ?? null, [{ cert_chain: t.cert, private_key: t.key }], t.ca !== undefined)
      : ServerCredentials.createInsecure());
  }

  private peer(nodeId: string): PeerClient | undefined {
    const m = this.membership.get(nodeId);
    if (!m || !m.address) return undefined;
    const cur = this.clients.get(nodeId);
    if (cur && cur.address === m.address) return cur.client;
    cur?.channel.close();
    const t = this.tls;
    const channel = t
      ? createChannel(m.address, ChannelCredentials.createSsl(t.ca ?? null, t.ca ? t.key : null, t.ca ? t.cert : null), NO_CHANNELZ)
      : createChannel(m.address, undefined, NO_CHANNELZ);
    const client = createClient(PeerServiceDefinition, channel);
    this.clients.set(nodeId, { address: m.address, channel, client });
    return client;
  }

  /** Live members changed: drop clients of nodes that left. */
  membersChanged(ids: string[]): void {
    const live = new Set(ids);
    for (const [id, c] of this.clients) {
      if (!live.has(id)) {
        c.channel.close();
        this.clients.delete(id);
      }
    }
    // New peers need our capacity to route to us.
    this.capacityChanged();
  }

  private peerIds(): string[] {
    return this.membership.liveIds().filter((id) => id !== this.nodeId);
  }

  // ---- request/reply ---------------------------------------------------------

  offer(nodeId: string, ref: OfferRef, epoch: number): Promise<OfferResult> {
    if (nodeId === this.nodeId) return this.handlers.offer(ref);
    const client = this.peer(nodeId);
    if (!client) return Promise.resolve('no-slot');
    return client
      .offer({ ref: toWireRef(ref), owner_node_id: this.nodeId, epoch }, { signal: AbortSignal.timeout(OFFER_TIMEOUT_MS) })
      .then((r) => fromWireResult(r.result));
  }

  invokeRpc(nodeId: string, req: pb.IInvokeRpcRequest, signal: AbortSignal): Promise<pb.IInvokeRpcResponse> {
    const client = this.peer(nodeId);
    if (!client) return Promise.reject(new Error(`peer ${nodeId} is not reachable`));
    return client.invokeRpc(req, { signal });
  }

  cancelAttempts(nodeId: string, attempts: pb.ICancelledAttemptRef[], reason: string): void {
    if (nodeId === this.nodeId) {
      this.handlers.cancelAttempts(attempts, reason);
      return;
    }
    this.peer(nodeId)?.cancelAttempts({ attempts, reason }).catch((err: Error) =>
      this.log.warn({ peer: nodeId, err: err.message }, 'cancel to peer failed'));
  }

  // ---- coalesced one-way messages -----------------------------------------------

  /** Our capacity changed: every peer gets a fresh snapshot within a few ms. */
  capacityChanged(): void {
    if (this.capacityTimer || this.closed) return;
    this.capacityTimer = setTimeout(() => {
      this.capacityTimer = undefined;
      const peers = this.peerIds();
      if (peers.length === 0) return;
      const update: pb.ICapacityUpdate = { node_id: this.nodeId, seq: ++this.capacitySeq, ...this.handlers.capacitySnapshot() };
      for (const id of peers) {
        this.peer(id)?.capacity(update).catch((err: Error) => this.log.debug({ peer: id, err: err.message }, 'capacity to peer failed'));
      }
    }, CAPACITY_COALESCE_MS);
  }

  /** A doorbell to one node (itself included), batched per node. */
  ring(nodeId: string, event: pb.IDoorbellEvent): void {
    if (nodeId === this.nodeId) {
      this.handlers.doorbell([event], this.nodeId);
      return;
    }
    const list = this.pendingBells.get(nodeId);
    if (list) list.push(event);
    else this.pendingBells.set(nodeId, [event]);
    this.bellTimer ??= setTimeout(() => this.flushBells(), BELL_COALESCE_MS);
  }

  /** A doorbell to every peer (not to ourselves). */
  ringAll(event: pb.IDoorbellEvent): void {
    for (const id of this.peerIds()) this.ring(id, event);
  }

  private flushBells(): void {
    this.bellTimer = undefined;
    for (const [id, events] of this.pendingBells) {
      this.peer(id)?.doorbell({ from_node_id: this.nodeId, events }).catch((err: Error) =>
        this.log.debug({ peer: id, err: err.message }, 'doorbell to peer failed'));
    }
    this.pendingBells.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.capacityTimer) clearTimeout(this.capacityTimer);
    if (this.bellTimer) {
      // Notices queued for peers still go out: a Step enqueued here in the last
      // milliseconds must reach its owner.
      clearTimeout(this.bellTimer);
      this.flushBells();
    }
    for (const c of this.clients.values()) c.channel.close();
    this.clients.clear();
    if (this.server) {
      const server = this.server;
      await Promise.race([server.shutdown(), new Promise<void>((r) => setTimeout(() => { server.forceShutdown(); r(); }, 1000).unref())]);
    }
  }
}

const RESULTS: Record<OfferResult, pb.OfferResult> = {
  taken: pb.OfferResult.TAKEN,
  'no-slot': pb.OfferResult.NO_SLOT,
  gone: pb.OfferResult.GONE,
};

function toWireResult(r: OfferResult): pb.OfferResult {
  return RESULTS[r];
}

function fromWireResult(r: pb.OfferResult | null | undefined): OfferResult {
  return r === pb.OfferResult.TAKEN ? 'taken' : r === pb.OfferResult.GONE ? 'gone' : 'no-slot';
}

function toWireRef(r: OfferRef): pb.ITaskRef {
  return {
    partition: r.partition, task_id: r.taskId, attempt: r.attempt, tenant: r.tenant, flow_type: r.flowType,
    step_type: r.stepType, ready_at_ms: r.readyAt, sticky_worker_id: r.appWorkerId ?? '', path: r.path,
  };
}

function fromWireRef(r: pb.ITaskRef | null | undefined): OfferRef {
  const path = r?.path === 'sticky' || r?.path === 'sync' ? r.path : 'queued';
  return {
    partition: r?.partition ?? 0, taskId: r?.task_id ?? '', attempt: r?.attempt ?? 0, tenant: r?.tenant ?? '',
    flowType: r?.flow_type ?? '', stepType: r?.step_type ?? '', readyAt: Number(r?.ready_at_ms ?? 0), path,
    appWorkerId: r?.sticky_worker_id || undefined,
  };
}
