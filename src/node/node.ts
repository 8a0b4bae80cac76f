/**
 * The composition root: one zdmatch node with its three roles (api, gateway,
 * owner), started in dependency order and drained in the fixed order of the
 * conventions: health NOT_SERVING → stop accepting → Reconnect idle streams →
 * wait for busy slots → release leases → server shutdown → force at the deadline.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { createServer, type Server } from 'nice-grpc';
import { HealthDefinition, HealthServiceImpl, HealthState } from 'nice-grpc-server-health';
import { ServerReflection, ServerReflectionService } from 'nice-grpc-server-reflection';
import path from 'node:path';
import type http from 'node:http';
import { configWarnings, type Config } from '../config';
import { errorMiddleware } from '../api/error-middleware';
import { protocolMiddleware } from '../api/protocol-middleware';
import { matchingService } from '../api/matching-service';
import { workerService } from '../api/worker-service';
import { LeaseManager } from '../cluster/leases';
import { Membership } from '../cluster/membership';
import { targetPartitions } from '../cluster/rendezvous';
import { CapacityView } from '../cluster/capacity-view';
import { ClusterDispatcher } from '../cluster/cluster-dispatcher';
import { Mesh } from '../cluster/mesh';
import { AttemptAudit } from './attempt-audit';
import { Gateway } from '../gateway/gateway';
import { OutcomeBell } from '../gateway/outcome-bell';
import { createMetrics, type Metrics } from '../metrics/registry';
import { OwnerRegistry } from '../owner/registry';
import { evictionPolicies } from '../store/eviction-policy';
import { Keys } from '../store/keys';
import { OutcomeStore } from '../store/outcomes';
import { Cluster } from 'ioredis';
import { clusterReady, clusterState, createRedis, logRedisErrors, type RedisClient } from '../store/redis';
import { RedisCa } from '../store/redis-ca';
import { TaskStore, type NewTask, type OutcomeStatusName } from '../store/task-store';
import { systemClock, type Clock } from '../util/clock';
import type { Logger } from '../util/logger';
import { eachApart } from '../util/each-apart';
import { ALL_SERVICES, MatchingServiceDefinition, WorkerTaskServiceDefinition } from '../wire';
import { listenGrpc } from './grpc-listen';
import { startMetricsServer } from './http-server';
// ---- fetch surface (issue 5) ----
import { externalTaskService, operatorService } from '../api/external-service';
import { startExternalHttp } from '../api/external-http';
import { ExternalTasks } from '../api/external-tasks';
import { FetchBell } from '../gateway/fetch-bell';
import { FetchStore } from '../store/fetch-store';
import { ExternalTaskServiceDefinition, OperatorServiceDefinition } from '../wire';
// ---- end fetch surface ----
// ---- auth/tls (issue 7) ----
import fs from 'node:fs';
import { experimental, ServerCredentials } from '@grpc/grpc-js';
import type https from 'node:https';
import { TlsCertificates, type CertificateFacts } from './tls-certificates';
import { Auth } from '../auth/auth';
import { LongPollGate } from '../api/long-polls';
import { EnqueueStreams } from '../api/enqueue-stream';
// ---- end auth/tls ----
import { Routing } from './routing';

export type NodeState = 'starting' | 'running' | 'draining' | 'stopped' | 'failed';

/** How long a flow remembers the app worker that last completed one of its Steps. */
const STICKY_TTL_MS = 24 * 3600_000;
const OUTCOME_TRIM_EVERY_MS = 10_000;
/** How often the attempt audit looks for attempts running here that no slot holds (two passes fail one). */
const ATTEMPT_AUDIT_EVERY_MS = 60_000;
/** The services a client may discover by reflection (not the internal peer mesh). */
const PUBLIC_SERVICES = [
  'zdmatch.v1.WorkerTaskService', 'zdmatch.v1.MatchingService', 'zdmatch.v1.ExternalTaskService',
  'zdmatch.v1.OperatorService',
];

export interface NodeOptions {
  logger: Logger;
  clock?: Clock;
}

/**
 * The least a peer's message may hold: a capacity snapshot grows with workers × flow types
 * and declines, not with payloads. Held to a payload's size, ten workers of 256 long flow
 * types (1.3 MB) were refused on every send, and the peer never learned of any of them.
 */
const MESH_MESSAGE_BYTES_MIN = 64 * 1024 * 1024;

export class ZdNode {
  state: NodeState = 'starting';
  apiAddress = '';
  httpAddress = '';
  metricsAddress = '';
  readonly nodeId: string;
  readonly bootId = randomBytes(6).toString('hex');
  readonly metrics: Metrics;
  readonly redis: RedisClient;
  /** Enqueues, on a connection of their own when they WAIT for replicas (redis.waitReplicas). */
  private readonly enqueueRedis: RedisClient;
  /** Outcome streams' reads and acks, on a connection of their own when they WAIT for replicas. */
  private readonly outcomeRedis: RedisClient;
  readonly keys: Keys;
  readonly store: TaskStore;
  readonly outcomes: OutcomeStore;
  readonly gateway: Gateway;
  /** Running attempts no slot holds, and held ones that no longer run, once a minute (attempt-audit.ts). */
  readonly attemptAudit: AttemptAudit;
  readonly owner: OwnerRegistry;
  readonly membership: Membership;
  readonly leases: LeaseManager;
  readonly mesh: Mesh;
  readonly view = new CapacityView();
  readonly routing: Routing;
  /** What peers dial (internal.advertise, else the bound internal.listen). */
  internalAddress = '';
  /** The port internal.listen bound (with internal.advertise, peers may reach it through something else). */
  internalPort = 0;
  /** Its first waiter and its last leaving change what peers send us: a fresh capacity snapshot tells them. */
  private readonly bell = new OutcomeBell(() => this.mesh.capacityChanged());
  /** NOT_SERVING until the node has joined the cluster (the library starts at SERVING): probes must not pass before. */
  private readonly health = HealthState();
  /** A task script's time, matching path and fetch surface alike (dexzd_redis_command_seconds). */
  private readonly observeRedis = (command: string, seconds: number): void => this.metrics.redisLatency.observe({ command }, seconds);
  private server: Server | undefined;
  private metricsServer: http.Server | undefined;
  private trimTimer: NodeJS.Timeout | undefined;
  /** The partitions an outcome trim is under way for (trimOutcomes). */
  private readonly trimming = new Set<number>();
  private closing: Promise<void> | undefined;
  private readonly log: Logger;
  private readonly clock: Clock;
  // ---- fetch surface (issue 5): set in boot() ----
  /** Doorbell of long-polling fetches, keyed by topic (queue name). */
  readonly fetchBell = new FetchBell();
  /** The fetch-and-lock surface (gRPC and HTTP share it); `hooks` is a test seam. */
  externalTasks: ExternalTasks | undefined;
  private externalHttp: http.Server | undefined;
  // ---- end fetch surface ----
  // ---- auth/tls (issue 7) ----
  /** Bearer tokens of every public surface (docs/security.md). */
  readonly auth: Auth;
  /** The bound on waiting calls (limits.maxLongPolls), shared by every surface. */
  readonly longPolls: LongPollGate;
  /** Producers' open EnqueueStream calls, ended on drain. */
  readonly enqueueStreams = new EnqueueStreams();
  /** The tls.* files, read at boot and again whenever they change on disk. */
  private tlsFiles: TlsCertificates | undefined;
  private redisCa: RedisCa | undefined;
  // ---- end auth/tls ----

  private constructor(readonly config: Config, opts: NodeOptions) {
    this.health.setStatus('unhealthy');
    this.log = opts.logger;
    this.clock = opts.clock ?? systemClock;
    // ---- auth/tls (issue 7) ----
    this.auth = new Auth(config, this.log);
    this.longPolls = new LongPollGate(config.limits.maxLongPolls);
    // ---- end auth/tls ----
    this.nodeId = config.cluster.nodeId || `${os.hostname()}-${randomBytes(3).toString('hex')}`;
    this.metrics = createMetrics({
      defaultMetrics: true,
      queuedInMemory: () => this.owner.waitingInMemory + this.gateway.rpcsWaiting,
      backlog: () => this.owner.backlog.snapshot(),
      slots: () => this.gateway.slotCounts(),
      liveNodes: () => this.membership.liveIds().length,
      consumerLag: () => this.owner.backlog.consumerLag(),
      enqueueStreams: () => this.enqueueStreams.size,
      peerLinks: () => this.mesh?.linkCounts() ?? { outbound: 0, inbound: 0 },
    });
    this.metrics.partitions.set(config.cluster.partitions);
    // A CA rotation reaches the connections opened after it (a reconnect) without a restart.
    if (config.redis.tlsCa && (config.redis.tls || config.redis.url.startsWith('rediss://'))) {
      this.redisCa = new RedisCa(config.redis.tlsCa, this.log);
      this.redisCa.start();
    }
    this.redis = createRedis(config.redis, {}, this.redisCa);
    // WAIT blocks the connection it is sent on until the replicas answer (up to a second
    // while one is down): on the shared one, lease renewals and membership heartbeats
    // queued behind it, and the node lost its leases. Enqueues that WAIT get their own.
    this.enqueueRedis = config.redis.waitReplicas > 0 ? createRedis(config.redis, { connectionName: 'zdmatch-enqueue' }, this.redisCa) : this.redis;
    logRedisErrors(this.redis, this.log, 'main');
    if (this.enqueueRedis !== this.redis) logRedisErrors(this.enqueueRedis, this.log, 'enqueue');
    // Outcome reads WAIT too before they are answered (api/matching-service.ts), on a connection of their own.
    this.outcomeRedis = config.redis.waitReplicas > 0 ? createRedis(config.redis, { connectionName: 'zdmatch-outcomes' }, this.redisCa) : this.redis;
    if (this.outcomeRedis !== this.redis) logRedisErrors(this.outcomeRedis, this.log, 'outcomes');
    this.keys = new Keys(config.redis.keyPrefix);
    this.store = new TaskStore(
      this.redis, this.keys, config.outcomes.retention, STICKY_TTL_MS,
      this.observeRedis,
      // write the newest task layout every live member reads (store/layout.ts)
      () => this.membership.taskLayout(),
      this.enqueueRedis,
    );
    this.outcomes = new OutcomeStore(this.outcomeRedis, this.keys, config.cluster.partitions);
    this.membership = new Membership(this.redis, this.keys, {
      nodeId: this.nodeId, bootId: this.bootId, address: config.internal.advertise || config.internal.listen,
      heartbeatMs: config.cluster.heartbeat, nodeTtlMs: config.cluster.nodeTtl,
    }, this.clock, this.log);
    this.leases = new LeaseManager(this.redis, this.keys, this.nodeId, config.cluster.leaseTtl, this.log);
    this.owner = new OwnerRegistry(this.redis, this.keys, this.store, {
      isNodeGone: (id, boot) => this.membership.isGone(id, boot),
      leaseMoved: () => void this.leases.tick(),
      outcomeWritten: (p, taskId, status, count) => this.outcomeWritten(p, taskId, status, count),
      headsRestored: (n) => this.metrics.headsRestored.inc(n),
      headsIncompleteScan: () => this.metrics.headsIncompleteScans.inc(),
      incompleteSeek: () => this.metrics.incompleteSeeks.inc(),
      backlogChanged: () => this.mesh?.capacityChanged(),
      peersBacklogged: (queue) => this.view.peerHasBacklog(queue),
      cancelAttempts: (attempts, reason) => this.routing.cancelAttempts(attempts, reason),
      heldAttempts: (nodeId, bootId, nonces) => this.mesh.heldAttempts(nodeId, bootId, nonces),
      taskFetchable: (queue, readyAt, p) => this.routing.taskFetchable(queue, readyAt, p),
    }, {
      stickyWaitMs: config.matching.stickyWait, syncMatchWaitMs: config.matching.syncMatchWait,
      headsResyncIntervalMs: config.matching.headsResyncInterval,
    }, this.clock, this.log);
    this.gateway = new Gateway({
      nodeId: this.nodeId, bootId: this.bootId,
      maxConcurrentTasksCap: config.matching.maxConcurrentTasksCap, maxStreams: config.matching.maxStreams,
      unsupportedTypeCacheEntries: config.matching.unsupportedTypeCacheEntries,
      pingIntervalMs: config.matching.pingInterval, maxPayloadBytes: config.limits.maxPayloadBytes,
      busyStreamSilenceMs: config.matching.busyStreamSilence,
      stickyWaitMs: config.matching.stickyWait,
    }, this.store, {
      capacityAvailable: (tenant, flowType, appWorkerId) => this.owner.capacityAvailable(tenant, flowType, appWorkerId),
      workerUnavailable: (tenant, appWorkerId) => this.routing.workerGoneHere(tenant, appWorkerId),
      typeDeclined: (tenant, flowType, stepType, appWorkerId) => this.owner.typeDeclined(tenant, flowType, stepType, appWorkerId),
      taskReady: (p, queue, taskId, readyAt, flowDeadline = 0, sticky = '') => {
        this.routing.taskFetchable(queue, readyAt, p); // a returned or retried Step is fetchable too
        this.routing.taskReady(p, queue, taskId, readyAt, sticky);
        if (flowDeadline > 0) this.routing.flowDeadlineSet(p, taskId, flowDeadline);
      },
      taskFetchable: (p, queue, readyAt) => this.routing.taskFetchable(queue, readyAt, p),
      attemptStarted: (p, deadlineAt) => this.routing.attemptStarted(p, deadlineAt),
      outcomeWritten: (p, taskId, status, count) => this.outcomeWritten(p, taskId, status, count),
      capacityChanged: () => this.mesh.capacityChanged(),
      rpcToIdlePeer: (call) => this.routing.rpcToIdlePeer(call),
    }, this.metrics, this.clock, this.log);
    this.attemptAudit = new AttemptAudit({
      ownersLook: () => this.owner.unheldAttempts.runOnce(),
      cancelEnded: () => this.gateway.cancelEnded(),
    }, ATTEMPT_AUDIT_EVERY_MS, this.log);
    this.mesh = new Mesh(this.nodeId, this.membership, {
      offer: (ref) => this.gateway.offer(ref),
      capacity: (u) => this.routing.onCapacity(u),
      doorbell: (events, from) => this.routing.onDoorbell(events, from),
      heldAttempts: (nonces) => ({ bootId: this.bootId, held: this.gateway.heldAmong(nonces) }),
      cancelAttempts: (attempts, reason) => this.gateway.cancelAttempts(attempts.map((a) => ({
        taskId: a.task_id ?? '', attempt: a.attempt ?? 0, nonce: a.nonce ?? '', streamId: a.stream_id ?? '',
      })), reason),
      invokeRpc: (req, signal, dispatchWaitMs) => this.routing.serveRpc(req, signal, dispatchWaitMs),
      noticesLost: (nodeId) => this.routing.noticesLost(nodeId),
      capacitySnapshot: () => {
        const b = this.owner.backlogSnapshot();
        return {
          ...this.gateway.capacitySnapshot(), outcome_waiter_gen: this.bell.generation, outcome_waiters: this.bell.waiting,
          fetch_topics: this.fetchBell.topics(), fetched_topics: this.fetchBell.fetchedTopics(),
          backlog_advertised: true, step_flow_types_advertised: true, busy_queues: b.busyQueues, waiting_flows: b.waitingFlows, backlog_loading: b.loading,
        };
      },
    }, this.log, this.metrics);
    this.routing = new Routing(
      this.nodeId, config.cluster.partitions, this.leases, this.membership, this.owner, this.gateway, this.mesh, this.view, this.bell,
      this.fetchBell, this.clock, this.redis, this.keys,
      { dispatchWaitMs: config.matching.dispatchWait, maxRunMs: config.limits.maxWait },
    );
    this.fetchBell.onTopics = () => this.mesh.capacityChanged();
    this.owner.setDispatcher(new ClusterDispatcher(this.nodeId, this.gateway, this.view, this.mesh, this.fetchBell, this.metrics));
  }

  /** Every TLS listener serves `facts`' certificate to its new connections (the mesh dials with it too). */
  private certificateServed(facts: CertificateFacts): void {
    for (const listener of ['api', 'http', 'internal']) this.metrics.tlsCertificateExpiry.set({ listener }, facts.notAfterMs / 1000);
  }

  /** An outcome (or `count` of them) was written here: counted by status, and its waiters rung, here and at peers. */
  private outcomeWritten(p: number, taskId: string, status: OutcomeStatusName, count = 1): void {
    this.metrics.outcomes.inc({ status }, count);
    this.routing.outcomeWritten(p, taskId);
  }

  static async start(config: Config, opts: NodeOptions): Promise<ZdNode> {
    const node = new ZdNode(config, opts);
    // What the connection last failed with: a boot that never reached Redis says so, not
    // ioredis's "Reached the max retries per request limit".
    let lastRedisError: string | undefined;
    const onRedisError = (err: Error) => (lastRedisError = err.message);
    node.redis.on('error', onRedisError);
    try {
      // A Redis Cluster that is not serving (a primary down and none of its replicas taken
      // over: cluster_state:fail) never readies ioredis's client, which holds every call;
      // with that primary frozen, its check waits on it for good, and the boot with it.
      if (node.redis instanceof Cluster && !(await clusterReady(node.redis, CLUSTER_READY_MS)) && lastRedisError === undefined) {
        const seen = await clusterState(config.redis);
        throw new Error(`redis: ${redisTarget(config)} is not serving: ${seen
          ? `${seen.node} reports cluster_state:${seen.state} (a primary down with no replica taken over, or hash slots unassigned)`
          : `none of its nodes answered CLUSTER INFO within ${CLUSTER_READY_MS / 1000} s`}; start the node once it reports cluster_state:ok`);
      }
      await node.boot();
      return node;
    } catch (err) {
      node.state = 'failed';
      const neverReached = lastRedisError !== undefined && node.redis.status !== 'ready';
      await node.close().catch(() => undefined);
      if (neverReached) throw new Error(`redis: cannot reach ${redisTarget(config)} (${lastRedisError}); is it running, and are redis.* right?`, { cause: err });
      throw err;
    } finally {
      node.redis.off('error', onRedisError);
    }
  }

  private async boot(): Promise<void> {
    const c = this.config;
    for (const warning of configWarnings(c)) this.log.warn({ config: true }, warning);
    await this.checkPartitionCount();
    await this.checkEvictionPolicy();
    this.leases.on('acquired', (lease) => {
      this.metrics.leaseChanges.inc({ event: 'acquired' });
      this.metrics.ownedPartitions.set(this.leases.heldPartitions().length);
      void this.owner.acquired(lease);
    });
    this.leases.on('unload', (lease, cause) => {
      this.metrics.leaseChanges.inc({ event: cause });
      this.metrics.ownedPartitions.set(this.leases.heldPartitions().length);
      // The lease is deleted once this resolves: the partition's offers out settle first.
      return this.owner.unload(lease, cause);
    });
    // A stopping node's peers learn of it when its mesh link ends (Mesh.linkEnded).
    this.leases.on('released', (lease, cause) => {
      if (cause === 'membership') this.routing.leaseReleased(lease.partition);
    });
    // Peers may have failed the attempts this node's slots run while it was silent (frozen, cut
    // off from Redis): those slots get Cancel. Once more a nodeTtl later, for a peer's sweep that
    // read this node gone just before it beat again and failed its attempts after that.
    this.membership.on('returned', () => {
      const check = () => void this.gateway.cancelEnded('attempt is no longer held (failed while this node was taken for gone)')
        .catch((err: Error) => this.log.warn({ err: err.message }, 'check of the attempts held here failed'));
      check();
      setTimeout(check, c.cluster.nodeTtl).unref();
    });
    // Peers as silent as this node itself were given nodeTtl to beat again: those that did not are gone.
    this.membership.on('silenceOver', () => void this.owner.membershipChanged());
    this.membership.on('change', (ids: string[]) => {
      // Workers of a node that left (it died: no last snapshot says they went) are gone with it.
      const left = this.view.retainOnly(new Set(ids));
      this.mesh.membersChanged(ids);
      this.routing.workersLeft(left);
      void this.leases.setTargets(targetPartitions(this.nodeId, ids, c.cluster.partitions));
      void this.owner.membershipChanged();
    });

    // ---- auth/tls (issue 7): tokens loaded (fail closed), TLS files read, mesh TLS set ----
    this.auth.start();
    if (c.tls.enabled) {
      this.tlsFiles = new TlsCertificates(c.tls, this.log);
      this.tlsFiles.start();
      this.mesh.tls = {
        certificates: this.tlsFiles, mutual: !!c.tls.ca, ...(c.tls.peerServerName ? { serverName: c.tls.peerServerName } : {}),
      };
    }
    // ---- end auth/tls ----
    const server = createServer({
      'grpc.max_receive_message_length': c.limits.maxPayloadBytes + 64 * 1024,
      'grpc.max_concurrent_streams': c.limits.maxStreamsPerConnection,
      // Nothing reads channelz, and grpc-js pays for it on every call and message.
      'grpc.enable_channelz': 0,
      // A connection that goes silent without closing (a frozen worker, a network that
      // black-holes it) must not keep its streams: Ping frames go to idle streams only,
      // and a busy one may say nothing until its result. An HTTP/2 PING every
      // matching.pingInterval, unanswered for another interval, drops the connection
      // (grpc-js destroys the session), so its streams end as resets and the attempts
      // they held fail as worker_lost (DESIGN §6). The grpc-js server sends these
      // whether or not calls are open, and polices no client pings (no too_many_pings
      // GOAWAY), so clients' own keepalive settings are not constrained by it.
      'grpc.keepalive_time_ms': c.matching.pingInterval,
      'grpc.keepalive_timeout_ms': c.matching.pingInterval,
    })
      .use(errorMiddleware(this.log))
      .use(protocolMiddleware())
      .use(this.auth.middleware());
    server.add(HealthDefinition, HealthServiceImpl(this.health));
    // Reflection lets buf curl and grpcurl explore a node without the .proto files.
    server.add(ServerReflectionService, ServerReflection(
      fs.readFileSync(path.join(__dirname, '..', 'generated', 'zdmatch.binpb')), PUBLIC_SERVICES,
    ));
    server.add(WorkerTaskServiceDefinition, workerService(this.gateway, c, this.log));
    server.add(MatchingServiceDefinition, matchingService({
      config: c, redis: this.redis, keys: this.keys, store: this.store, outcomes: this.outcomes, bell: this.bell,
      membership: this.membership, metrics: this.metrics, clock: this.clock,
      invokeRpc: (r, signal) => this.routing.invokeRpc(r, signal),
      taskEnqueued: (t, sticky) => {
        this.routing.taskFetchable(t.queue, t.readyAt, t.partition); // wake long-polling fetches of the topic, here and at peers
        this.routing.taskEnqueued(
          t.partition, t.queue, t.taskId, Math.max(t.readyAt, this.clock.now()), sticky, t.flowDeadline,
        );
      },
      taskReady: (p, queue, taskId, readyAt) => {
        // A retried enqueue: the first may have committed on a node that died before
        // it rang, so long-polling fetches of the topic (and their hints) hear it too.
        this.routing.taskFetchable(queue, readyAt, p);
        this.routing.taskReady(p, queue, taskId, readyAt);
      },
      cancelAttempts: (attempts, reason) => this.routing.cancelAttempts(attempts, reason),
      outcomeWritten: (p, taskId, status, count) => this.outcomeWritten(p, taskId, status, count),
      longPolls: this.longPolls,
      enqueueStreams: this.enqueueStreams,
      recheckPrincipal: (ctx) => this.auth.recheck('client', ctx),
      log: this.log,
      enqueueStarts: {
        // An idle slot first: it is the cheap check, and at full load there is none, so
        // the backlog scan of mayStartAtEnqueue (every owned partition) is skipped.
        bind: (t, now) => t.readyAt <= now
          && this.gateway.hasIdleStepSlot(t.tenant, t.flowType, t.stepType, t.stickyWorkerId || undefined)
          && this.mayStartAtEnqueue(t)
          ? this.gateway.bindForEnqueue(t.tenant, t.flowType, t.stepType, t.stickyWorkerId || undefined)
          : undefined,
        started: (b, t, deadlineAt, now, sticky) => {
          // Placement never sees it, but its flow deadline still needs the owner's timer (a retry may queue it).
          if (t.flowDeadline > 0) this.routing.flowDeadlineSet(t.partition, t.taskId, t.flowDeadline);
          void this.gateway.startedAtEnqueue(b, t, deadlineAt, now, sticky ? 'sticky' : 'sync');
        },
        release: (b) => this.gateway.releaseBinding(b),
        abandon: (b, t) => this.gateway.abandonBinding(b, t),
      },
    }));
    // ---- fetch surface (issue 5): ExternalTaskService + OperatorService on gRPC, HTTP/JSON on http.listen ----
    const externalTasks = new ExternalTasks({
      config: c, store: new FetchStore(this.redis, this.keys, c.outcomes.retention, this.observeRedis), bell: this.fetchBell,
      clock: this.clock, log: this.log,
      taskReady: (p, queue, taskId, readyAt) => this.routing.taskReady(p, queue, taskId, readyAt),
      fetchable: (queue, readyAt, p) => this.routing.taskFetchable(queue, readyAt, p),
      outcomeWritten: (p, taskId, status, count) => this.outcomeWritten(p, taskId, status, count),
      longPolls: this.longPolls,
    });
    this.externalTasks = externalTasks;
    server.add(ExternalTaskServiceDefinition, externalTaskService(externalTasks, c));
    server.add(OperatorServiceDefinition, operatorService(externalTasks, c));
    const fetchHttp = await startExternalHttp(c.http.listen, externalTasks, c, this.log, {
      auth: this.auth, ...(this.tlsFiles ? { tls: this.tlsFiles.current } : {}),
    });
    this.externalHttp = fetchHttp.server;
    const tlsFiles = this.tlsFiles;
    if (tlsFiles) {
      // The gRPC listeners and the mesh's dialling side take a new set from the provider; HTTPS from here.
      tlsFiles.onApplied((pem, facts) => {
        (fetchHttp.server as https.Server).setSecureContext({ cert: pem.cert, key: pem.key });
        this.certificateServed(facts);
      });
      this.certificateServed(tlsFiles.facts);
    }
    this.httpAddress = fetchHttp.address;
    // ---- end fetch surface ----
    this.server = server;
    const credentials = this.tlsFiles
      ? experimental.createCertificateProviderServerCredentials(this.tlsFiles, null, false)
      : ServerCredentials.createInsecure();
    const port = await listenGrpc('api.listen', c.api.listen, () => server.listen(c.api.listen, credentials));
    this.apiAddress = `${hostOf(c.api.listen)}:${port}`;

    const internalPort = await listenGrpc('internal.listen', c.internal.listen,
      () => this.mesh.listen(c.internal.listen, Math.max(c.limits.maxPayloadBytes + 64 * 1024, MESH_MESSAGE_BYTES_MIN)));
    this.internalPort = internalPort;
    this.internalAddress = c.internal.advertise || `${hostOf(c.internal.listen)}:${internalPort}`;
    // Every port is bound before the node joins: one it cannot bind fails the boot before its
    // peers see it and hand it their partitions, to take them back when it exits.
    const m = await startMetricsServer(c.metrics.listen, this.metrics.registry, () => this.state === 'running');
    this.metricsServer = m.server;
    this.metricsAddress = m.address;

    this.membership.setAddress(this.internalAddress);
    await this.membership.start();
    this.leases.start();
    await this.leases.setTargets(targetPartitions(this.nodeId, this.membership.liveIds(), c.cluster.partitions));

    this.trimTimer = setInterval(() => void this.trimOutcomes(), OUTCOME_TRIM_EVERY_MS);
    this.trimTimer.unref();
    this.attemptAudit.start();
    for (const name of Object.keys(ALL_SERVICES)) this.health.setStatus('healthy', name);
    this.health.setStatus('healthy');
    this.state = 'running';
    this.log.info({ nodeId: this.nodeId, api: this.apiAddress, metrics: this.metricsAddress }, 'zdmatch node running');
  }

  /**
   * Whether a new Step may start at enqueue in an idle slot of this node, in
   * a partition it owns or not: nothing of its queue or flow type waits here
   * or, as the peers advertise, at any other owner (a new Step never cuts in
   * front of a backlog). For a partition owned elsewhere every peer must have
   * said: its owner places the Step otherwise. The flow's remembered sticky
   * worker is checked by the enqueue script itself.
   */
  private mayStartAtEnqueue(t: NewTask): boolean {
    // Not before this node has read itself among the members (its first heartbeat, or again after
    // heartbeats that stalled past nodeTtl): an owner would take the attempt for a dead node's.
    if (!this.membership.isLive(this.nodeId, this.bootId)) return false;
    if (!this.owner.mayStartAtEnqueue(t.partition, t.queue, t.tenant, t.flowType)) return false;
    const owned = this.leases.holds(t.partition) !== undefined;
    const peers = this.membership.liveIds().filter((id) => id !== this.nodeId);
    return peers.length === 0 || this.view.peersAllowStartAtEnqueue(t.queue, t.tenant, t.flowType, peers, !owned);
  }

  /** The partition count is fixed for the life of a cluster: refuse to join with another. */
  private async checkPartitionCount(): Promise<void> {
    const want = this.config.cluster.partitions;
    await this.redis.hsetnx(this.keys.meta(), 'partitions', want);
    const have = Number(await this.redis.hget(this.keys.meta(), 'partitions'));
    if (have !== want) {
      throw new Error(`config cluster.partitions: ${want} differs from the ${have} this Redis was set up with (fixed for the life of a cluster)`);
    }
  }

  /** A Redis that may evict keys loses Steps and outcomes without an error: said at WARN at boot (store/eviction-policy.ts). */
  private async checkEvictionPolicy(): Promise<void> {
    for (const p of await evictionPolicies(this.redis)) {
      const redis = p.server || undefined;
      if (p.policy === undefined) {
        this.log.info({ redis, err: p.error }, 'could not read Redis maxmemory-policy; zdmatch needs noeviction');
      } else if (p.policy !== 'noeviction') {
        this.log.warn({ redis, maxmemoryPolicy: p.policy },
          `Redis maxmemory-policy is ${p.policy}: under memory pressure Redis drops zdmatch's keys, and Steps or outcomes are lost without an error; set it to noeviction`);
      }
    }
  }

  /** Trims each owned partition's outcome stream on its own (eachApart: one on a primary that stopped answering holds no other). */
  private async trimOutcomes(): Promise<void> {
    const now = this.clock.now();
    await eachApart(this.owner.owned().map((p) => p.partition), this.trimming, (partition) =>
      this.outcomes.trim(partition, now, this.config.outcomes.retention).catch((err: Error) =>
        this.log.warn({ partition, err: err.message }, 'outcome trim failed')));
  }

  /** Graceful stop: finishes busy slots (up to drain.timeout), hands partitions over, exits. */
  drain(reason = 'drain'): Promise<void> {
    return this.close(reason);
  }

  close(reason = 'close'): Promise<void> {
    this.closing ??= this.doClose(reason);
    return this.closing;
  }

  private async doClose(reason: string): Promise<void> {
    const wasRunning = this.state === 'running';
    this.state = 'draining';
    // Slots give their attempts back while the node drains: none of that is an attempt left unheld.
    this.attemptAudit.stop();
    this.log.info({ reason }, 'node draining');
    const step = async (name: string, fn: () => unknown) => {
      try {
        await fn();
      } catch (err) {
        this.log.warn({ step: name, err: (err as Error).message }, 'shutdown step failed');
      }
    };
    await step('health', () => {
      this.health.setStatus('unhealthy');
      for (const name of Object.keys(ALL_SERVICES)) this.health.setStatus('unhealthy', name);
    });
    if (wasRunning) {
      await step('reconnect', () => {
        this.gateway.startDrain();
        this.enqueueStreams.drain(); // producers reconnect elsewhere; nothing they sent is lost (see enqueue-stream.ts)
      });
      const deadline = this.clock.now() + this.config.drain.timeout;
      while (this.gateway.busySlots() > 0 && this.clock.now() < deadline) await sleep(50);
    }
    await step('streams', () => {
      this.gateway.closeAll();
      this.enqueueStreams.drain();
    });
    if (this.trimTimer) clearInterval(this.trimTimer);
    await step('leases', () => this.leases.releaseAll());
    await step('membership', () => this.membership.leave());
    await step('mesh', () => this.mesh.close());
    await step('server', async () => {
      // Waiting calls answer now (nothing yet), so shutdown need not wait them out: their callers
      // ask again on a new connection, to a node that serves on.
      this.longPolls.close();
      this.bell.wakeAll();
      this.fetchBell.wakeAll();
      const server = this.server;
      if (!server) return;
      const forced = sleep(2000).then(() => server.forceShutdown());
      await Promise.race([server.shutdown(), forced]);
    });
    // ---- fetch surface (issue 5): long polls in flight end at once (their fetches claim nothing) ----
    await step('http', () => new Promise<void>((resolve) => {
      this.fetchBell.stop();
      const h = this.externalHttp;
      if (!h) return resolve();
      // Requests in flight finish first (their long polls were woken above, so they answer at once): a
      // fetch whose claim is still in Redis must reach its worker, or give its locks back while Redis is
      // open. Cut at once, its tasks sat out a lock nobody held. Idle connections close now, and each one
      // that answered its request since within 50 ms (keep-alive would hold it); the rest by 2 s.
      const idle = setInterval(() => h.closeIdleConnections(), 50);
      const forced = setTimeout(() => h.closeAllConnections(), 2000);
      h.close(() => {
        clearInterval(idle);
        clearTimeout(forced);
        resolve();
      });
      h.closeIdleConnections();
    }));
    // ---- end fetch surface ----
    await step('auth', () => {
      this.auth.stop();
      this.tlsFiles?.stop();
    }); // ---- auth/tls (issue 7) ----
    await step('metrics', () => new Promise<void>((resolve) => (this.metricsServer ? this.metricsServer.close(() => resolve()) : resolve())));
    this.gateway.stop();
    this.owner.stop();
    await step('redis', async () => {
      this.redisCa?.stop();
      await closeRedis(this.redis);
      if (this.enqueueRedis !== this.redis) await closeRedis(this.enqueueRedis);
      if (this.outcomeRedis !== this.redis) await closeRedis(this.outcomeRedis);
    });
    this.state = 'stopped';
    this.log.info('node stopped');
  }
}

function hostOf(listen: string): string {
  const host = listen.slice(0, listen.lastIndexOf(':'));
  return host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
}

/**
 * QUIT, then drop the connection: a QUIT Redis cannot answer (out of reach, the
 * client reconnecting) would wait in the offline queue, and a stopping node with it.
 */
async function closeRedis(client: RedisClient, quitWithinMs = 1000): Promise<void> {
  await Promise.race([client.quit().catch(() => undefined), sleep(quitWithinMs)]);
  client.disconnect();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** How long a node's boot waits for its Redis Cluster client to be ready. */
const CLUSTER_READY_MS = 10_000;

/** Where the node looks for Redis, for messages: the configured target without credentials. */
function redisTarget(c: Config): string {
  const r = c.redis;
  if (r.clusterNodes.length > 0) return `the Redis Cluster at ${r.clusterNodes.join(', ')} (redis.clusterNodes)`;
  if (r.sentinels.length > 0) return `Sentinel master ${r.sentinelName} via ${r.sentinels.join(', ')} (redis.sentinels)`;
  try {
    const u = new URL(r.url);
    return `${u.protocol}//${u.host} (redis.url)`;
  } catch {
    return 'redis.url';
  }
}
