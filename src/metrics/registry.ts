/**
 * Every metric, defined once on one Registry (DESIGN §10). Names are a
 * published interface. Labels are bounded: no task or flow ids.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { pb } from '../wire';

export interface BacklogRow {
  tenant: string;
  flowType: string;
  stepType: string;
  entries: number;
  oldestAgeSeconds: number;
}

/** Values read at scrape time (gauges of state the node already holds). */
export interface MetricSources {
  defaultMetrics?: boolean;
  /** Steps in their sticky or sync-match phase plus RPCs waiting for a slot. */
  queuedInMemory?: () => number;
  backlog?: () => { queues: BacklogRow[]; unserved: { no_worker: number; no_supporting_worker: number } };
  slots?: () => { kind: string; state: string; count: number }[];
  liveNodes?: () => number;
  consumerLag?: () => Map<string, number>;
  /** Open EnqueueStream calls. */
  enqueueStreams?: () => number;
  /** Open Link streams: this node's to its peers, and its peers' to it. */
  peerLinks?: () => { outbound: number; inbound: number };
}

/**
 * How often the event-loop lag is sampled. prom-client's default (10 ms) is a
 * libuv timer that wakes an idle node 100 times a second, every one of them a
 * wakeup a busy machine pays for; at 100 ms a stall the lag metrics exist to
 * show (a long GC, a blocking call) is still seen, as the delay of the sample
 * that waited behind it.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/*
 * Every value the one label of each counter below can take. createMetrics()
 * exports each of those series at 0 from the start: a series that first
 * appears at 1 has no increase to show, so `increase(...) > 0` alerts and
 * rate() panels would miss its first event (the first lost lease, the first
 * UNAVAILABLE). Where the wire contract enumerates the values they come from
 * it; the others name the values of a type in a layer above this one (metrics
 * imports none of those), and test/unit/metrics-initial-series.test.ts holds
 * each list equal to its type at compile time.
 */

/** The names of a generated enum, without its 0 (`*_UNSPECIFIED`) value. */
function enumNames(e: object): string[] {
  return Object.entries(e).filter(([, v]) => typeof v === 'number' && v !== 0).map(([k]) => k);
}

/** `dexzd_cluster_lease_changes_total{event}`: `acquired`, then each UnloadCause of cluster/leases.ts. */
export const LEASE_CHANGE_EVENTS = ['acquired', 'lease-lost', 'membership', 'shutdown'] as const;
/** `dexzd_matching_rpcs_total{result}`: the kinds of gateway/slot.ts RpcSettlement. */
export const RPC_RESULTS = ['result', 'unavailable', 'not-found'] as const;
/** `dexzd_matching_offers_total{result}`: owner/dispatcher.ts OfferResult, and `error` for an offer that threw. */
export const OFFER_RESULTS = ['taken', 'no-slot', 'gone', 'error'] as const;
/** `dexzd_step_tasks_enqueued_total{result}`: store/task-store.ts EnqueueResult. */
export const ENQUEUE_RESULTS = ['created', 'exists', 'ended'] as const;
/** `dexzd_matching_returned_attempts_total{reason}`: the reasons DESIGN §10 publishes. */
export const RETURNED_ATTEMPT_REASONS = ['unknown_type', 'drain_no_output', 'write_failed', 'legacy_no_capacity'] as const;
/** `dexzd_mesh_messages_total{message}`: the calls cluster/mesh.ts makes to peers. */
export const MESH_MESSAGES = ['offer', 'offer_batch', 'invoke_rpc', 'cancel_attempts', 'held_attempts', 'capacity', 'doorbell'] as const;
/** `dexzd_outcomes_total{status}`: the wire's OutcomeStatus names (store/task-store.ts OutcomeStatusName). */
export const OUTCOME_STATUSES: readonly string[] = enumNames(pb.OutcomeStatus);
/** `dexzd_mesh_doorbell_events_total{kind}`: the wire's DoorbellEvent.Kind names, lower case. */
export const DOORBELL_KINDS: readonly string[] = enumNames(pb.DoorbellEvent.Kind).map((k) => k.toLowerCase());

/** The `kind` label of a doorbell event kind: its wire name in lower case (`unknown` for a value this build lacks). */
export function doorbellKindLabel(kind: number): string {
  const name = pb.DoorbellEvent.Kind[kind];
  return kind !== 0 && name ? name.toLowerCase() : 'unknown';
}

/** `counter` with a series at 0 for each of `values` of its one label. */
function startAtZero<T extends string>(counter: Counter<T>, label: T, values: readonly string[]): Counter<T> {
  for (const v of values) counter.inc({ [label]: v } as Partial<Record<T, string>>, 0);
  return counter;
}

export function createMetrics(opts: MetricSources = {}) {
  const registry = new Registry();
  if (opts.defaultMetrics) {
    collectDefaultMetrics({ register: registry, prefix: 'dexzd_process_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }
  const r = [registry];
  return {
    registry,
    queueEntries: new Gauge({
      name: 'dexzd_step_task_queue_entries', help: 'Queued Steps in the partitions this node owns (low after a failover until each partition is counted)',
      labelNames: ['tenant', 'flow_type', 'step_type'], registers: r,
      collect() {
        if (!opts.backlog) return;
        this.reset();
        for (const q of opts.backlog().queues) this.set({ tenant: q.tenant, flow_type: q.flowType, step_type: q.stepType }, q.entries);
      },
    }),
    queueOldestAge: new Gauge({
      name: 'dexzd_step_task_queue_oldest_age_seconds', help: 'Age of the oldest queued Step (accurate from the first queued task after a failover)',
      labelNames: ['tenant', 'flow_type', 'step_type'], registers: r,
      collect() {
        if (!opts.backlog) return;
        this.reset();
        for (const q of opts.backlog().queues) this.set({ tenant: q.tenant, flow_type: q.flowType, step_type: q.stepType }, q.oldestAgeSeconds);
      },
    }),
    slots: new Gauge({
      name: 'dexzd_gateway_slots', help: 'Worker slots on this node by kind and state', labelNames: ['kind', 'state'], registers: r,
      collect() {
        if (!opts.slots) return;
        this.reset();
        for (const s of opts.slots()) this.set({ kind: s.kind, state: s.state }, s.count);
      },
    }),
    liveNodes: new Gauge({
      name: 'dexzd_cluster_live_nodes', help: 'Nodes this node sees as live', registers: r,
      collect() {
        if (opts.liveNodes) this.set(opts.liveNodes());
      },
    }),
    tlsCertificateExpiry: new Gauge({
      name: 'dexzd_tls_certificate_expiry_timestamp_seconds',
      help: 'When the certificate each TLS listener serves to new connections expires (its notAfter), in seconds since the epoch; absent without TLS',
      labelNames: ['listener'], registers: r,
    }),
    enqueueStreams: new Gauge({
      name: 'dexzd_api_enqueue_streams', help: 'Open EnqueueStream calls on this node', registers: r,
      collect() {
        if (opts.enqueueStreams) this.set(opts.enqueueStreams());
      },
    }),
    peerLinks: new Gauge({
      name: 'dexzd_mesh_peer_links', help: 'Open peer Link streams: outbound (this node to a peer) and inbound (a peer to this node)',
      labelNames: ['direction'], registers: r,
      collect() {
        if (!opts.peerLinks) return;
        const l = opts.peerLinks();
        this.set({ direction: 'outbound' }, l.outbound);
        this.set({ direction: 'inbound' }, l.inbound);
      },
    }),
    consumerLag: new Gauge({
      name: 'dexzd_outcome_consumer_lag', help: 'Outcomes of the partitions this node owns not yet read by each consumer group',
      labelNames: ['group'], registers: r,
      collect() {
        if (!opts.consumerLag) return;
        this.reset();
        for (const [group, n] of opts.consumerLag()) this.set({ group }, n);
      },
    }),
    offers: startAtZero(new Counter({ name: 'dexzd_matching_offers_total', help: 'Offers of ready tasks to gateways, by result', labelNames: ['result'], registers: r }), 'result', OFFER_RESULTS),
    meshMessages: startAtZero(new Counter({
      name: 'dexzd_mesh_messages_total', help: 'Calls this node made to peers, by message (offers of one turn to one peer share an offer_batch call)',
      labelNames: ['message'], registers: r,
    }), 'message', MESH_MESSAGES),
    meshDoorbellEvents: startAtZero(new Counter({
      name: 'dexzd_mesh_doorbell_events_total', help: 'Notices this node sent to peers in doorbell calls, by kind', labelNames: ['kind'], registers: r,
    }), 'kind', DOORBELL_KINDS),
    redisLatency: new Histogram({
      name: 'dexzd_redis_command_seconds', help: 'Latency of the task scripts and Redis calls of the matching path and the fetch surface',
      labelNames: ['command'], buckets: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.1, 0.5], registers: r,
    }),
    matchingQueued: new Gauge({
      name: 'dexzd_matching_queued_tasks', help: 'In-memory waiters: Steps in their sticky or sync-match phase and RPCs waiting for a slot', registers: r,
      collect() {
        if (opts.queuedInMemory) this.set(opts.queuedInMemory());
      },
    }),
    rpcs: startAtZero(new Counter({ name: 'dexzd_matching_rpcs_total', help: 'InvokeRpc calls by result', labelNames: ['result'], registers: r }), 'result', RPC_RESULTS),
    unservedQueues: new Gauge({
      name: 'dexzd_matching_unserved_task_queues', help: 'Queues with backlog that no connected worker can serve and no fetch asked for in the last minute', labelNames: ['reason'], registers: r,
      collect() {
        if (!opts.backlog) return;
        const u = opts.backlog().unserved;
        this.set({ reason: 'no_worker' }, u.no_worker);
        this.set({ reason: 'no_supporting_worker' }, u.no_supporting_worker);
      },
    }),
    headsRestored: new Counter({ name: 'dexzd_matching_heads_restored_refs_total', help: 'Queued tasks the periodic heads resync or backlog count found matching had lost (should stay 0)', registers: r }),
    headsIncompleteScans: new Counter({ name: 'dexzd_matching_heads_incomplete_scans_total', help: 'Heads resync scans that did not finish', registers: r }),
    incompleteSeeks: new Counter({ name: 'dexzd_step_task_queue_incomplete_seeks_total', help: 'Searches for the next queued task that passed too many deleted or stale entries', registers: r }),
    returnedAttempts: startAtZero(
      new Counter({ name: 'dexzd_matching_returned_attempts_total', help: 'Attempts returned without consuming a retry', labelNames: ['reason'], registers: r }),
      'reason', RETURNED_ATTEMPT_REASONS,
    ),
    reserveDeclines: new Counter({ name: 'dexzd_matching_reserve_declined_tasks_total', help: 'Deprecated, kept for compatibility; always zero', registers: r }),
    streams: new Gauge({ name: 'dexzd_gateway_streams', help: 'Registered worker streams on this node', labelNames: ['kind'], registers: r }),
    dispatchLatency: new Histogram({
      name: 'dexzd_matching_dispatch_latency_seconds',
      help: 'Time from a task becoming ready to its start, by dispatch path (sticky, sync, queued; rpc: an RPC\'s wait for a slot at the node whose slot took it)',
      labelNames: ['path'], buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30], registers: r,
    }),
    ownedPartitions: new Gauge({ name: 'dexzd_cluster_owned_partitions', help: 'Partitions whose lease this node holds', registers: r }),
    // The partition count (cluster.partitions) beside it: alerts compare the owned sum with it.
    partitions: new Gauge({ name: 'dexzd_cluster_partitions', help: 'Partitions of the cluster (cluster.partitions)', registers: r }),
    leaseChanges: startAtZero(
      new Counter({ name: 'dexzd_cluster_lease_changes_total', help: 'Partition leases acquired and given up', labelNames: ['event'], registers: r }),
      'event', LEASE_CHANGE_EVENTS,
    ),
    tasksEnqueued: startAtZero(
      new Counter({ name: 'dexzd_step_tasks_enqueued_total', help: 'Steps accepted by EnqueueStep(s)', labelNames: ['result'], registers: r }),
      'result', ENQUEUE_RESULTS,
    ),
    outcomes: startAtZero(new Counter({ name: 'dexzd_outcomes_total', help: 'Outcomes written by this node', labelNames: ['status'], registers: r }), 'status', OUTCOME_STATUSES),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
