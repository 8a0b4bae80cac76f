/**
 * Every metric, defined once on one Registry (DESIGN §10). Names are a
 * published interface. Labels are bounded: no task or flow ids.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricSources {
  defaultMetrics?: boolean;
  /** Steps in their sticky or sync-match phase plus RPCs waiting for a slot, read at scrape time. */
  queuedInMemory?: () => number;
}

export function createMetrics(opts: MetricSources = {}) {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'dexzd_process_' });
  const r = [registry];
  return {
    registry,
    queueEntries: new Gauge({ name: 'dexzd_step_task_queue_entries', help: 'Queued Steps in the partitions this node owns (low after a failover until each partition is counted)', labelNames: ['tenant', 'flow_type', 'step_type'], registers: r }),
    queueOldestAge: new Gauge({ name: 'dexzd_step_task_queue_oldest_age_seconds', help: 'Age of the oldest queued Step', labelNames: ['tenant', 'flow_type', 'step_type'], registers: r }),
    matchingQueued: new Gauge({
      name: 'dexzd_matching_queued_tasks', help: 'In-memory waiters: Steps in their sticky or sync-match phase and RPCs waiting for a slot', registers: r,
      collect() {
        if (opts.queuedInMemory) this.set(opts.queuedInMemory());
      },
    }),
    rpcs: new Counter({ name: 'dexzd_matching_rpcs_total', help: 'InvokeRpc calls by result', labelNames: ['result'], registers: r }),
    unservedQueues: new Gauge({ name: 'dexzd_matching_unserved_task_queues', help: 'Queues with backlog that no connected worker can serve', labelNames: ['reason'], registers: r }),
    headsRestored: new Counter({ name: 'dexzd_matching_heads_restored_refs_total', help: 'Queued tasks the periodic resync found matching had lost (should stay 0)', registers: r }),
    headsIncompleteScans: new Counter({ name: 'dexzd_matching_heads_incomplete_scans_total', help: 'Heads resync scans that did not finish', registers: r }),
    incompleteSeeks: new Counter({ name: 'dexzd_step_task_queue_incomplete_seeks_total', help: 'Searches for the next queued task that passed too many deleted or stale entries', registers: r }),
    returnedAttempts: new Counter({ name: 'dexzd_matching_returned_attempts_total', help: 'Attempts returned without consuming a retry', labelNames: ['reason'], registers: r }),
    reserveDeclines: new Counter({ name: 'dexzd_matching_reserve_declined_tasks_total', help: 'Deprecated, kept for compatibility; always zero', registers: r }),
    streams: new Gauge({ name: 'dexzd_gateway_streams', help: 'Registered worker streams on this node', labelNames: ['kind'], registers: r }),
    dispatchLatency: new Histogram({
      name: 'dexzd_matching_dispatch_latency_seconds', help: 'Time from a task becoming ready to its start, by dispatch path',
      labelNames: ['path'], buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30], registers: r,
    }),
    ownedPartitions: new Gauge({ name: 'dexzd_cluster_owned_partitions', help: 'Partitions whose lease this node holds', registers: r }),
    leaseChanges: new Counter({ name: 'dexzd_cluster_lease_changes_total', help: 'Partition leases acquired and given up', labelNames: ['event'], registers: r }),
    tasksEnqueued: new Counter({ name: 'dexzd_step_tasks_enqueued_total', help: 'Steps accepted by EnqueueStep(s)', labelNames: ['result'], registers: r }),
    outcomes: new Counter({ name: 'dexzd_outcomes_total', help: 'Outcomes written by this node', labelNames: ['status'], registers: r }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
