/**
 * The internal peer mesh (DESIGN §1, §4): a PeerService server on
 * internal.listen and a client per live peer. Offers and RPC routing are
 * request/reply; capacity snapshots and doorbells are coalesced one-way
 * messages whose loss costs only latency (safety never rests on them).
 * Capacity, doorbells and offer batches go over one long-lived Link stream
 * per peer (peer-link.ts), unary calls to a peer without it. A message to
 * oneself is a local call.
 */
import { ChannelCredentials, experimental, ServerCredentials } from '@grpc/grpc-js';
import {
  ClientError, createChannel, createClient, createServer, Metadata, Status, type CallContext, type Channel, type Server, type ServerMiddlewareCall,
} from 'nice-grpc';
import { invalidArgument } from '../errors';
import { doorbellKindLabel, type Metrics } from '../metrics/registry';
import type { OfferRef, OfferResult } from '../owner/dispatcher';
import { boundedSignal } from '../util/bounded-signal';
import type { Logger } from '../util/logger';
import { pb, PeerServiceDefinition } from '../wire';
import { decodeProblem } from '../wire/adapter';
import type { Membership } from './membership';
import { LinkServer, PeerLink, type PendingBatch } from './peer-link';
import { within } from '../util/within';

/** No channelz bookkeeping: nothing reads it, and grpc-js pays for it on every call and message. */
const NO_CHANNELZ = { 'grpc.enable_channelz': 0 };
/**
 * Peers are on the cluster's network and a member until nodeTtl passes: one that stops
 * answering is redialled every second at most, not on grpc-js's backoff (1 s growing to
 * 120 s), and its connection is its own (not shared with another channel to the address).
 */
const PEER_CHANNEL = {
  ...NO_CHANNELZ, 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 1000, 'grpc.use_local_subchannel_pool': 1,
};

export interface MeshHandlers {
  offer(ref: OfferRef): Promise<OfferResult>;
  capacity(update: pb.ICapacityUpdate): void;
  doorbell(events: pb.IDoorbellEvent[], from: string): void;
  cancelAttempts(attempts: pb.ICancelledAttemptRef[], reason: string): void;
  /** Which of these start nonces this node's slots hold (one answer each, in order), and this node's boot. */
  heldAttempts(nonces: string[]): { bootId: string; held: boolean[] };
  /** `dispatchWaitMs`: what the sender left of the call's matching.dispatchWait; undefined from an older peer. */
  invokeRpc(req: pb.InvokeRpcRequest, signal: AbortSignal, dispatchWaitMs?: number): Promise<pb.IInvokeRpcResponse>;
  capacitySnapshot(): Omit<pb.ICapacityUpdate, 'node_id' | 'seq'>;
  /** Notices to the peer may be lost: our link to it is served again after one broke, or it dropped some for a peer that fell behind. */
  noticesLost?(nodeId: string): void;
}

/** TLS of the peer mesh (issue 7): with `mutual` (tls.ca set), peers must present a certificate the CA signed. */
export interface MeshTls {
  /**
   * The node's certificate and key and, with `mutual`, the CA bundle, kept current with their files
   * (node/tls-certificates.ts): new connections, served and dialled, take a rotated set.
   */
  certificates: experimental.CertificateProvider;
  mutual: boolean;
  /**
   * tls.peerServerName: the name every peer's certificate is checked against
   * (and the calls' :authority). Unset: the host of the address the peer
   * advertises, which in Kubernetes is a pod IP no shared certificate names.
   */
  serverName?: string;
}

/** Channel options that verify a peer as `t.serverName` rather than as the host it is dialled at. */
function peerNameOptions(t: MeshTls): Record<string, string> {
  return t.serverName ? { 'grpc.ssl_target_name_override': t.serverName, 'grpc.default_authority': t.serverName } : {};
}

type PeerClient = ReturnType<typeof createClient<typeof PeerServiceDefinition>>;

/**
 * An RPC that never left for the peer: it is not a member, or grpc-js had no
 * connection to put the call on. Nothing ran there, so the caller may try
 * another node, which a call that reached the peer (and may be running) must not.
 */
export class PeerUnreachableError extends Error {}

/** grpc-js's words for a call that found no transport (picker and pick_first). */
const NO_CONNECTION = /^(\w+: )?No connection established/;

/** Reading the membership when a peer's link ends: at most this often. */
const LINK_END_BEAT_MS = 1000;

/**
 * Beyond an RPC's budget, how long a peer that ran it has to send the answer back. Well
 * inside the Client's own margin past the caller's timeout (RPC_DEADLINE_MARGIN_MS, 1 s, in
 * sdk/client/client.ts): a peer that stops answering (frozen, cut off) ends the call
 * UNAVAILABLE from this node, where an equal grace raced the caller into DEADLINE_EXCEEDED.
 */
const RPC_ANSWER_GRACE_MS = 400;
/** How long an RPC waits on a fresh read of the members for a peer not read yet (at most half its budget). */
const RPC_MEMBERS_READ_MS = 250;

/**
 * InvokeRpc call metadata: how much of the call's matching.dispatchWait is left
 * when it is handed to a peer (it may have waited here, or at another peer,
 * first). timeout_ms carries the run budget, which stays whole.
 */
export const RPC_DISPATCH_WAIT_HEADER = 'zd-rpc-dispatch-wait-ms';

/** The header's milliseconds; undefined when absent (an older peer) or not a count of them. */
export function parseDispatchWait(raw: string | Uint8Array | undefined): number | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  return /^\d{1,12}$/.test(text) ? Number(text) : undefined;
}

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
/**
 * A snapshot goes out at least this often, changed or not. An owner counts a slot it
 * offers as taken (CapacityView.reserve) until the peer's next snapshot; a peer whose
 * slots then stay as they were sent none, so an offer that never reached it, or that
 * it answered no-slot while a slot was bound for a moment, left the owner thinking
 * the slot busy for good, and a Step that only that slot could run waited for ever.
 */
const CAPACITY_REFRESH_MS = 1000;
const BELL_COALESCE_MS = 5;
const OFFER_TIMEOUT_MS = 2000;
/**
 * A one-way message (capacity, doorbell, cancel) sent as a unary call is given up
 * past this: a peer that stopped reading (a frozen process keeps its TCP connection
 * open) held each call and its message for as long as it stayed frozen, and closing
 * the channel once it left the members does not end calls already made.
 */
const ONE_WAY_TIMEOUT_MS = 5000;
/** How long close() waits for the notices its last flush sent as unary calls. */
const CLOSE_NOTICES_WAIT_MS = 1000;
/** Nonces per HeldAttempts call: well under the mesh's message size limit at any nonce length. */
export const HELD_ATTEMPTS_MAX = 1000;
/** Offers per OfferBatch call; a longer turn's offers go in several calls. */
const OFFER_BATCH_MAX = 256;
/** How often the mesh server pings a peer's connection, and how long it waits for the answer (Mesh.listen). */
const PEER_KEEPALIVE_MS = 10_000;
/** After a link to a peer broke, unary calls for this long before dialing a new one. */
const LINK_RETRY_MS = 1000;

interface PendingOffer {
  offer: pb.IOfferRequest;
  resolve(r: OfferResult): void;
  reject(err: Error): void;
}

interface PeerEntry {
  nodeId: string;
  address: string;
  /** The peer's boot the connection was made for. */
  bootId: string;
  channel: Channel;
  client: PeerClient;
  /** The peer answered OfferBatch with UNIMPLEMENTED (an older build): single offers only. */
  singleOffers?: boolean;
  link?: PeerLink;
  /** The peer answered Link with UNIMPLEMENTED (an older build): unary calls only. */
  noLink?: boolean;
  linkRetryAt?: number;
  /** A link to this boot broke: what went out around it may be lost, which the next served link says (noticesLost). */
  linkBroke?: boolean;
}

export class Mesh {
  private server: Server | undefined;
  private readonly clients = new Map<string, PeerEntry>();
  private capacityTimer: NodeJS.Timeout | undefined;
  private capacitySeq = Date.now() * 1000;
  /** When the last snapshot went out (Date.now() ms), for the refresh. */
  private capacitySentAt = 0;
  private refreshTimer: NodeJS.Timeout | undefined;
  /** One fresh read of the members for offers, Cancels and RPCs to a peer we have no entry for yet. */
  private membersRead: Promise<void> | undefined;
  private readonly pendingBells = new Map<string, pb.IDoorbellEvent[]>();
  private bellTimer: NodeJS.Timeout | undefined;
  private readonly pendingOffers = new Map<string, PendingOffer[]>();
  private offerFlush: NodeJS.Immediate | undefined;
  private closed = false;
  /** close() has begun: its last notices go over a link already open, else as unary calls it waits for. */
  private closing = false;
  /** The doorbells on their way as unary calls, or waiting for a read of the members (close waits for them). */
  private readonly unaryBells = new Set<Promise<unknown>>();
  private lastLinkEndBeat = 0;
  private linkServer: LinkServer | undefined;
  /** Set before listen(); plaintext when unset. */
  tls: MeshTls | undefined;
  /** What every peer channel dials with under TLS: one, so a rotation reaches each channel's next connection. */
  private peerCredentials: ChannelCredentials | undefined;

  constructor(
    private readonly nodeId: string,
    private readonly membership: Membership,
    private readonly handlers: MeshHandlers,
    private readonly log: Logger,
    private readonly metrics?: Metrics,
  ) {}

  private sent(message: string): void {
    this.metrics?.meshMessages.inc({ message });
  }

  /**
   * Starts the PeerService listener; returns the bound port. `keepaliveMs`: each peer's
   * connection is pinged that often and closed when a ping goes unanswered as long, so
   * the calls of a peer that vanished without closing them (a host gone, a network that
   * black-holes it) end; nothing else would end its Link, which stayed for good.
   */
  async listen(address: string, maxMessageBytes: number, keepaliveMs = PEER_KEEPALIVE_MS): Promise<number> {
    const h = this.handlers;
    this.refreshTimer = setInterval(() => {
      if (Date.now() - this.capacitySentAt >= CAPACITY_REFRESH_MS) this.capacityChanged();
    }, CAPACITY_REFRESH_MS);
    this.refreshTimer.unref();
    const server = createServer({
      'grpc.max_receive_message_length': maxMessageBytes, 'grpc.keepalive_time_ms': keepaliveMs, 'grpc.keepalive_timeout_ms': keepaliveMs,
      ...NO_CHANNELZ,
    }).use(refuseUndecoded);
    this.linkServer = new LinkServer({
      capacity: (u) => h.capacity(u),
      doorbell: (events, from) => h.doorbell(events, from),
      offerBatch: (req) => this.runOfferBatch(req),
    }, this.log);
    server.add(PeerServiceDefinition, {
      offer: async (req: pb.OfferRequest) => ({ result: toWireResult(await h.offer(fromWireRef(req.ref))) }),
      offerBatch: (req: pb.OfferBatchRequest) => this.runOfferBatch(req),
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
      heldAttempts: async (req: pb.HeldAttemptsRequest) => {
        if (req.nonces.length > HELD_ATTEMPTS_MAX) {
          throw invalidArgument('nonces', `holds ${req.nonces.length}, over the ${HELD_ATTEMPTS_MAX} a call may ask about`);
        }
        const r = h.heldAttempts(req.nonces);
        return { boot_id: r.bootId, held: r.bootId === req.boot_id ? r.held : [] };
      },
      invokeRpc: (req: pb.InvokeRpcRequest, ctx) => h.invokeRpc(req, ctx.signal, parseDispatchWait(ctx.metadata.get(RPC_DISPATCH_WAIT_HEADER))),
      link: this.linkServer.handler(),
    });
    this.server = server;
    const t = this.tls;
    // grpc-js names this function's first parameter the CA provider, but takes it as the identity's (1.14).
    return server.listen(address, t
      ? experimental.createCertificateProviderServerCredentials(t.certificates, t.mutual ? t.certificates : null, t.mutual)
      : ServerCredentials.createInsecure());
  }

  private async runOfferBatch(req: pb.IOfferBatchRequest): Promise<pb.IOfferBatchResponse> {
    const settled = await Promise.allSettled((req.offers ?? []).map((o) => this.handlers.offer(fromWireRef(o.ref))));
    return {
      results: settled.map((r) => {
        if (r.status === 'fulfilled') return toWireResult(r.value);
        this.log.warn({ err: (r.reason as Error).message }, 'offer from peer failed');
        return pb.OfferResult.OFFER_RESULT_UNSPECIFIED;
      }),
    };
  }

  /** Open Link streams, for the dexzd_mesh_peer_links gauge. */
  linkCounts(): { outbound: number; inbound: number } {
    let outbound = 0;
    for (const c of this.clients.values()) if (c.link?.open) outbound++;
    return { outbound, inbound: this.linkServer?.size ?? 0 };
  }

  /** The open link to a peer, dialing one when there is none; undefined: use unary calls. */
  private linkOf(peer: PeerEntry): PeerLink | undefined {
    if (peer.noLink || this.closed) return undefined;
    if (peer.link?.open) return peer.link;
    // A link dialled now would be closed before the peer read it.
    if (this.closing) return undefined;
    if (peer.linkRetryAt !== undefined && Date.now() < peer.linkRetryAt) return undefined;
    const link: PeerLink = new PeerLink(peer.client, OFFER_TIMEOUT_MS, (unimplemented, unsent, batches) => {
      if (peer.link === link) peer.link = undefined;
      if (unimplemented) peer.noLink = true;
      else {
        peer.linkRetryAt = Date.now() + LINK_RETRY_MS;
        peer.linkBroke = true;
        this.linkEnded();
      }
      // What the peer never confirmed goes again, as unary calls.
      for (const f of unsent) {
        if (f.capacity) this.unaryCapacity(peer, f.capacity);
        else if (f.doorbell) this.unaryDoorbell(peer, f.doorbell);
      }
      for (const b of batches) this.unaryBatch(peer, b);
    }, this.log, () => {
      if (!peer.linkBroke || this.closed) return;
      peer.linkBroke = false;
      this.handlers.noticesLost?.(peer.nodeId);
    }, () => {
      if (!this.closed) this.handlers.noticesLost?.(peer.nodeId);
    });
    peer.link = link;
    return link;
  }

  /**
   * A peer's link ended: it may have left (a node drains by giving its leases up,
   * leaving the membership and closing its mesh, in that order). Reading the
   * membership now, rather than at the next heartbeat, lets its partitions be taken
   * over at once (DESIGN §3: acquire on notice). At most once a second.
   */
  private linkEnded(): void {
    const now = Date.now();
    if (this.closed || now - this.lastLinkEndBeat < LINK_END_BEAT_MS) return;
    this.lastLinkEndBeat = now;
    void this.membership.beat().catch((err: Error) => this.log.debug({ err: err.message }, 'membership read after a link ended failed'));
  }

  private peer(nodeId: string): PeerClient | undefined {
    return this.peerEntry(nodeId)?.client;
  }

  private peerEntry(nodeId: string): PeerEntry | undefined {
    // Closed: a channel made now (a notice rung late) would be closed by nothing.
    if (this.closed) return undefined;
    const m = this.membership.get(nodeId);
    if (!m || !m.address) return undefined;
    const cur = this.clients.get(nodeId);
    // A new boot at the same address (a container restarted in its pod within nodeTtl) gets a
    // connection of its own: the dead boot's had backed off its redials (and may remember an
    // older build's answers, singleOffers / noLink), and calls to the new one failed meanwhile.
    if (cur && cur.address === m.address && cur.bootId === m.bootId) return cur;
    cur?.link?.close();
    cur?.channel.close();
    const t = this.tls;
    const channel = t
      ? createChannel(m.address, this.peerCredentialsOf(t), { ...PEER_CHANNEL, ...peerNameOptions(t) })
      : createChannel(m.address, undefined, PEER_CHANNEL);
    const entry: PeerEntry = { nodeId, address: m.address, bootId: m.bootId, channel, client: createClient(PeerServiceDefinition, channel) };
    this.clients.set(nodeId, entry);
    return entry;
  }

  /**
   * Mutual TLS: each new connection presents the certificate in service then and trusts the CA bundle
   * in service then (a reconnect of an old channel too). Else the system's CAs and no certificate.
   */
  private peerCredentialsOf(t: MeshTls): ChannelCredentials {
    this.peerCredentials ??= t.mutual
      ? experimental.createCertificateProviderChannelCredentials(t.certificates, t.certificates)
      : ChannelCredentials.createSsl(null, null, null);
    return this.peerCredentials;
  }

  /** Live members changed: drop clients of nodes that left. */
  membersChanged(ids: string[]): void {
    const live = new Set(ids);
    for (const [id, c] of this.clients) {
      if (!live.has(id)) {
        c.link?.close();
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

  private hasPeers(): boolean {
    const ids = this.membership.liveIds();
    return ids.length > 1 || (ids.length === 1 && ids[0] !== this.nodeId);
  }

  // ---- request/reply ---------------------------------------------------------

  /**
   * Offers a task to a node. Offers to a peer wait for the end of this
   * event-loop turn and go out together: an owner's pump offers several heads
   * to the same node at once when a capacity snapshot arrives.
   */
  offer(nodeId: string, ref: OfferRef, epoch: number): Promise<OfferResult> {
    if (nodeId === this.nodeId) return this.handlers.offer(ref);
    if (!this.peerEntry(nodeId)) return this.offerAfterMembersRead(nodeId, ref, epoch);
    return this.queueOffer(nodeId, ref, epoch);
  }

  /**
   * A peer whose capacity we hold but whose membership entry (its address) we have not
   * read yet: it joined after our last read, and its first snapshot came over its own
   * link sooner. One fresh read of the members, shared by the offers that wait for it;
   * answered no-slot without one, the offer never reached the peer and its slot stayed
   * counted as taken here.
   */
  private async offerAfterMembersRead(nodeId: string, ref: OfferRef, epoch: number): Promise<OfferResult> {
    if (this.closed) return 'no-slot';
    await this.readMembers();
    if (this.closed || !this.peerEntry(nodeId)) return 'no-slot';
    return this.queueOffer(nodeId, ref, epoch);
  }

  /** One fresh read of the members (a heartbeat), shared by every caller that waits meanwhile. */
  private readMembers(): Promise<void> {
    this.membersRead ??= this.membership.beat()
      .catch((err: Error) => this.log.debug({ err: err.message }, 'membership read for a peer not read yet failed'))
      .finally(() => {
        this.membersRead = undefined;
      });
    return this.membersRead;
  }

  private queueOffer(nodeId: string, ref: OfferRef, epoch: number): Promise<OfferResult> {
    return new Promise<OfferResult>((resolve, reject) => {
      const offer: pb.IOfferRequest = { ref: toWireRef(ref), owner_node_id: this.nodeId, epoch };
      const list = this.pendingOffers.get(nodeId);
      if (list) list.push({ offer, resolve, reject });
      else this.pendingOffers.set(nodeId, [{ offer, resolve, reject }]);
      this.offerFlush ??= setImmediate(() => this.flushOffers());
    });
  }

  private flushOffers(): void {
    this.offerFlush = undefined;
    const pending = [...this.pendingOffers];
    this.pendingOffers.clear();
    for (const [nodeId, offers] of pending) {
      for (let i = 0; i < offers.length; i += OFFER_BATCH_MAX) this.sendOffers(nodeId, offers.slice(i, i + OFFER_BATCH_MAX));
    }
  }

  private sendOffers(nodeId: string, offers: PendingOffer[]): void {
    const peer = this.peerEntry(nodeId);
    if (!peer) {
      for (const o of offers) o.resolve('no-slot');
      return;
    }
    if (offers.length === 1 || peer.singleOffers) {
      for (const o of offers) this.sendOne(peer, o);
      return;
    }
    this.sent('offer_batch');
    const req: pb.IOfferBatchRequest = { offers: offers.map((o) => o.offer) };
    const settle = (r: pb.IOfferBatchResponse) => offers.forEach((o, i) => {
      const result = r.results?.[i];
      if (result === pb.OfferResult.TAKEN || result === pb.OfferResult.NO_SLOT || result === pb.OfferResult.GONE) o.resolve(fromWireResult(result));
      else o.reject(new Error(`peer ${nodeId} could not take offer ${i + 1} of ${offers.length}`));
    });
    const fail = (err: unknown) => {
      if (err instanceof ClientError && err.code === Status.UNIMPLEMENTED) {
        // A peer of an older build during a rolling upgrade: one call per offer.
        peer.singleOffers = true;
        for (const o of offers) this.sendOne(peer, o);
        return;
      }
      for (const o of offers) o.reject(err as Error);
    };
    const link = this.linkOf(peer);
    if (link?.roomForOffers) link.offers(req).then(settle, fail);
    else peer.client.offerBatch(req, { signal: AbortSignal.timeout(OFFER_TIMEOUT_MS) }).then(settle, fail);
  }

  /** An offer batch a link never delivered, as a unary call. */
  private unaryBatch(peer: PeerEntry, b: PendingBatch): void {
    peer.client.offerBatch(b.frame.offers ?? {}, { signal: AbortSignal.timeout(OFFER_TIMEOUT_MS) }).then(b.resolve, b.reject);
  }

  private unaryCapacity(peer: PeerEntry, update: pb.ICapacityUpdate): void {
    peer.client.capacity(update, { signal: AbortSignal.timeout(ONE_WAY_TIMEOUT_MS) }).catch((err: Error) => this.log.debug({ peer: peer.address, err: err.message }, 'capacity to peer failed'));
  }

  private unaryDoorbell(peer: PeerEntry, req: pb.IDoorbellRequest): void {
    const call = peer.client.doorbell(req, { signal: AbortSignal.timeout(ONE_WAY_TIMEOUT_MS) })
      .catch((err: Error) => this.log.debug({ peer: peer.address, err: err.message }, 'doorbell to peer failed'))
      .finally(() => this.unaryBells.delete(call));
    this.unaryBells.add(call);
  }

  private sendOne(peer: PeerEntry, o: PendingOffer): void {
    this.sent('offer');
    peer.client.offer(o.offer, { signal: AbortSignal.timeout(OFFER_TIMEOUT_MS) })
      .then((r) => o.resolve(fromWireResult(r.result)), (err: Error) => o.reject(err));
  }

  /** `dispatchWaitMs`: what is left of the call's matching.dispatchWait; the peer looks for a worker no longer. */
  async invokeRpc(nodeId: string, req: pb.IInvokeRpcRequest, signal: AbortSignal, dispatchWaitMs?: number): Promise<pb.IInvokeRpcResponse> {
    let client = this.peer(nodeId);
    const budget = Number(req.timeout_ms ?? 0);
    // A peer whose capacity we hold but whose membership entry we lack: it joined after our last
    // read, or a stall here let its heartbeat look old. One fresh read of the members settles it,
    // if Redis answers in time: a frozen Redis (or a Cluster primary down) costs the call this
    // peer, never the caller's deadline.
    if (!client && !this.closed) {
      await within(this.readMembers(), budget > 0 ? Math.min(RPC_MEMBERS_READ_MS, Math.floor(budget / 2)) : RPC_MEMBERS_READ_MS);
      client = this.peer(nodeId);
    }
    if (!client) throw new PeerUnreachableError(`peer ${nodeId} is not reachable`);
    this.sent('invoke_rpc');
    const metadata = dispatchWaitMs === undefined
      ? undefined
      : Metadata({ [RPC_DISPATCH_WAIT_HEADER]: String(Math.max(0, Math.ceil(dispatchWaitMs))) });
    // A peer that stops answering (a network partition, a frozen process) must not hold
    // the caller past the call's own budget: the peer gets it whole, plus a moment to answer.
    const bounded = budget > 0 ? boundedSignal(signal, budget + RPC_ANSWER_GRACE_MS) : undefined;
    try {
      return await client.invokeRpc(req, { signal: bounded?.signal ?? signal, metadata });
    } catch (err) {
      if (err instanceof ClientError && err.code === Status.UNAVAILABLE && NO_CONNECTION.test(err.details)) {
        throw new PeerUnreachableError(`peer ${nodeId} is not reachable: ${err.details}`);
      }
      throw err;
    } finally {
      bounded?.dispose();
    }
  }

  cancelAttempts(nodeId: string, attempts: pb.ICancelledAttemptRef[], reason: string): void {
    if (nodeId === this.nodeId) {
      this.handlers.cancelAttempts(attempts, reason);
      return;
    }
    const client = this.peer(nodeId);
    if (client) {
      this.sendCancel(nodeId, client, attempts, reason);
      return;
    }
    // A node we have not read among the members yet (it joined after our last read):
    // dropped, the Cancel never reached the running handler (its late result is still
    // refused). One fresh read of the members, then it goes.
    void this.readMembers().then(() => {
      const c = this.closed ? undefined : this.peer(nodeId);
      if (c) this.sendCancel(nodeId, c, attempts, reason);
      else this.log.warn({ peer: nodeId, attempts: attempts.length }, 'cancel for attempts on a node that is not a member: not sent');
    });
  }

  /**
   * Which of the attempts Redis says run on `nodeId`'s instance `bootId` its slots hold
   * (one answer per nonce, in order), asked in calls of HELD_ATTEMPTS_MAX. Undefined when
   * there is no answer to trust: the peer is not reachable, is another instance of the id
   * (the dead-node sweep ends those attempts), or is an older build without the call.
   */
  async heldAttempts(nodeId: string, bootId: string, nonces: string[]): Promise<boolean[] | undefined> {
    if (nodeId === this.nodeId) {
      const r = this.handlers.heldAttempts(nonces);
      return r.bootId === bootId ? r.held : undefined;
    }
    const client = this.peer(nodeId);
    if (!client) return undefined;
    const held: boolean[] = [];
    try {
      for (let i = 0; i < nonces.length; i += HELD_ATTEMPTS_MAX) {
        const part = nonces.slice(i, i + HELD_ATTEMPTS_MAX);
        this.sent('held_attempts');
        const r = await client.heldAttempts({ boot_id: bootId, nonces: part }, { signal: AbortSignal.timeout(ONE_WAY_TIMEOUT_MS) });
        if (r.boot_id !== bootId || r.held.length !== part.length) return undefined;
        held.push(...r.held);
      }
      return held;
    } catch (err) {
      this.log.debug({ peer: nodeId, err: (err as Error).message }, 'held-attempts question to peer failed');
      return undefined;
    }
  }

  private sendCancel(nodeId: string, client: PeerClient, attempts: pb.ICancelledAttemptRef[], reason: string): void {
    this.sent('cancel_attempts');
    client.cancelAttempts({ attempts, reason }, { signal: AbortSignal.timeout(ONE_WAY_TIMEOUT_MS) }).catch((err: Error) =>
      this.log.warn({ peer: nodeId, err: err.message }, 'cancel to peer failed'));
  }

  // ---- coalesced one-way messages -----------------------------------------------

  /**
   * Our capacity changed: every peer gets a fresh snapshot within a few ms. With
   * no peer there is nobody to tell, and no timer to wake the node for: a new
   * peer gets a snapshot when it joins (membersChanged).
   */
  capacityChanged(): void {
    if (this.capacityTimer || this.closed || !this.hasPeers()) return;
    this.capacityTimer = setTimeout(() => {
      this.capacityTimer = undefined;
      const peers = this.peerIds();
      if (peers.length === 0) return;
      this.capacitySentAt = Date.now();
      const update: pb.ICapacityUpdate = { node_id: this.nodeId, seq: ++this.capacitySeq, ...this.handlers.capacitySnapshot() };
      for (const id of peers) {
        const peer = this.peerEntry(id);
        if (!peer) continue;
        this.sent('capacity');
        const link = this.linkOf(peer);
        if (link) link.send({ capacity: update });
        else this.unaryCapacity(peer, update);
      }
    }, CAPACITY_COALESCE_MS);
  }

  /**
   * A node whose first snapshot just came here gets ours within a few ms. Snapshots go to
   * the members read, and a node that joined since our last read waited for our next
   * heartbeat to hear from us: the partitions it took over could not be offered to our idle
   * workers meanwhile. One read of the members first when we have not read it there yet;
   * none before this node has joined them (its first heartbeat checks its id is free).
   */
  sendSnapshotTo(nodeId: string): void {
    if (this.closed || !this.membership.get(this.nodeId)) return;
    if (this.membership.get(nodeId)) {
      this.capacityChanged();
      return;
    }
    void this.readMembers().then(() => {
      if (!this.closed && this.membership.get(nodeId)) this.capacityChanged();
    });
  }

  /** A doorbell to one node (itself included), batched per node. */
  ring(nodeId: string, event: pb.IDoorbellEvent): void {
    if (nodeId === this.nodeId) {
      this.handlers.doorbell([event], this.nodeId);
      return;
    }
    if (this.closed) return;
    const list = this.pendingBells.get(nodeId);
    if (list) list.push(event);
    else this.pendingBells.set(nodeId, [event]);
    this.bellTimer ??= setTimeout(() => this.flushBells(), BELL_COALESCE_MS);
  }

  private flushBells(): void {
    this.bellTimer = undefined;
    let unread: Map<string, pb.IDoorbellEvent[]> | undefined;
    for (const [id, events] of this.pendingBells) {
      const peer = this.peerEntry(id);
      if (peer) this.sendBells(peer, events);
      else (unread ??= new Map()).set(id, events);
    }
    this.pendingBells.clear();
    // A peer not read among the members yet (it joined after our last read): one fresh read, then
    // they go. Dropped, a READY notice waited for the owner's backlog count, an outcome's for a
    // waiter's next look.
    if (unread) {
      const later = unread;
      const read = this.readMembers().then(() => {
        for (const [id, events] of later) {
          const peer = this.closed ? undefined : this.peerEntry(id);
          if (peer) this.sendBells(peer, events);
          else this.log.debug({ peer: id, events: events.length }, 'doorbell for a node that is not a member: not sent');
        }
      }).finally(() => this.unaryBells.delete(read));
      this.unaryBells.add(read);
    }
  }

  private sendBells(peer: PeerEntry, events: pb.IDoorbellEvent[]): void {
    this.sent('doorbell');
    if (this.metrics) {
      const kinds = new Map<number, number>();
      for (const e of events) kinds.set(e.kind ?? 0, (kinds.get(e.kind ?? 0) ?? 0) + 1);
      for (const [kind, n] of kinds) this.metrics.meshDoorbellEvents.inc({ kind: doorbellKindLabel(kind) }, n);
    }
    const req: pb.IDoorbellRequest = { from_node_id: this.nodeId, events };
    const link = this.linkOf(peer);
    if (link) link.send({ doorbell: req });
    else this.unaryDoorbell(peer, req);
  }

  async close(): Promise<void> {
    if (this.capacityTimer) clearTimeout(this.capacityTimer);
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    if (this.offerFlush) {
      clearImmediate(this.offerFlush);
      this.flushOffers();
    }
    this.closing = true;
    if (this.bellTimer) {
      // Notices queued for peers still go out: a Step enqueued here in the last
      // milliseconds must reach its owner. Over a link already open they are written
      // before it ends; as unary calls (a peer with no link open, an older build) they
      // are waited for a moment, as closing the channel fails a call not yet connected.
      clearTimeout(this.bellTimer);
      this.flushBells();
      const until = Date.now() + CLOSE_NOTICES_WAIT_MS;
      while (this.unaryBells.size > 0 && Date.now() < until) await within(Promise.allSettled([...this.unaryBells]), until - Date.now());
    }
    this.closed = true;
    // Our links end once their peers have answered what they read; theirs to us end now.
    this.linkServer?.closeAll();
    for (const c of this.clients.values()) {
      c.link?.close();
      c.channel.close();
    }
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

/**
 * A peer's request that did not decode is refused, naming the field: handed on, it
 * was read as an empty message (an Offer or a Capacity of nothing answered OK, a
 * Doorbell or CancelAttempts failed UNKNOWN on a field it lacked, an InvokeRpc of
 * no name waited dispatchWait). Link frames are checked by LinkServer.
 */
async function* refuseUndecoded<Req, Res>(call: ServerMiddlewareCall<Req, Res>, context: CallContext) {
  const undecoded = call.requestStream ? undefined : decodeProblem(call.request);
  if (undecoded) throw invalidArgument(undecoded.field, undecoded.reason);
  return yield* call.next(call.request, context);
}

function fromWireRef(r: pb.ITaskRef | null | undefined): OfferRef {
  const path = r?.path === 'sticky' || r?.path === 'sync' ? r.path : 'queued';
  return {
    partition: r?.partition ?? 0, taskId: r?.task_id ?? '', attempt: r?.attempt ?? 0, tenant: r?.tenant ?? '',
    flowType: r?.flow_type ?? '', stepType: r?.step_type ?? '', readyAt: Number(r?.ready_at_ms ?? 0), path,
    appWorkerId: r?.sticky_worker_id || undefined,
  };
}
