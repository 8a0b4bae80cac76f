/**
 * A pull worker: one outbound stream per execution slot (DESIGN §5).
 *
 *   const worker = new Worker({ address, tenant, flowTypes: { order: { steps: { charge } } } });
 *   const running = worker.start();
 *   await worker.waitPullRegistered(AbortSignal.timeout(30_000));
 *   …
 *   await worker.stop();
 */
import { createClient, type Channel } from 'nice-grpc';
import { createSdkChannel } from '../common';
import { pb, WorkerTaskServiceDefinition } from '../../wire';
import { WorkerCapacityError, WorkerStoppedError } from './errors';
import { compileWorkerOptions, type CompiledWorkerOptions, type WorkerOptions } from './options';
import { PongSweep } from './pongs';
import { ReadinessTracker, type Readiness } from './readiness';
import type { SlotHost } from './session';
import { Slot } from './slot';
import type { SlotKindName } from './types';
import { sharedAbortController } from '../common/shared-signal';

/** After the drain timeout, results already sent get this long for their ResultAck. */
export const FLUSH_GRACE_MS = 5_000;

export type WorkerState = 'idle' | 'running' | 'stopping' | 'stopped' | 'failed';

export class Worker {
  readonly options: CompiledWorkerOptions;
  private readonly tracker: ReadinessTracker;
  private readonly pongs: PongSweep;
  private readonly stopController = sharedAbortController();
  private stateValue: WorkerState = 'idle';
  private startPromise: Promise<void> | undefined;
  private stopPromise: Promise<void> | undefined;
  private fatal: unknown = null;
  private channel: Channel | undefined;
  private client: SlotHost['client'] | undefined;
  /** Counts the connections made: a Reconnect renews the one its stream used, once. */
  private channelGen = 0;
  private slots: Slot[] = [];
  private loops: Promise<void>[] = [];
  private hasRegistered = false;
  private warnedCap = 0;

  /** Validates the options at once; throws a TypeError naming a bad one. */
  constructor(options: WorkerOptions) {
    this.options = compileWorkerOptions(options);
    const required: SlotKindName[] = this.options.reservedRpcTasks > 0 ? ['STEP_AND_RPC', 'RPC_ONLY'] : ['STEP_AND_RPC'];
    this.tracker = new ReadinessTracker(required);
    this.pongs = new PongSweep(this.options.pongIntervalMs);
  }

  get appWorkerId(): string {
    return this.options.appWorkerId;
  }

  get state(): WorkerState {
    return this.stateValue;
  }

  /**
   * Opens the slot streams and runs until stopped: resolves once stop()
   * completes, rejects with a startup error (protocol mismatch, a cap below
   * the task limit, a TLS file it cannot read; waitPullRegistered() rejects
   * with it too) or, with `stopOnPermanentStreamRejection`, a
   * PullRegistrationError — each after draining. Idempotent.
   */
  start(): Promise<void> {
    this.startPromise ??= this.run();
    return this.startPromise;
  }

  /**
   * Resolves once every required slot kind has a registered stream, and from
   * then on always. Rejects with a PullRegistrationError on a permanent
   * rejection while no stream of that kind is registered, with the startup
   * error, when the worker stops first, or with the signal's reason.
   * Safe to call concurrently and before start().
   */
  waitPullRegistered(signal?: AbortSignal): Promise<void> {
    return this.tracker.wait(signal);
  }

  /** The readiness report for probes (DESIGN §5). */
  readiness(): Readiness {
    return this.tracker.snapshot();
  }

  /**
   * Graceful stop: no new tasks, idle streams half-close at once, busy ones
   * after their result is acknowledged; after `stopDrainTimeout` running
   * handlers are aborted and their streams reset, results already sent get
   * a 5 s flush grace, and a handler still running after it is not waited
   * for (it is logged). Idempotent; safe before start() and after it returned.
   */
  stop(): Promise<void> {
    this.stopPromise ??= this.drainAndClose();
    return this.stopPromise;
  }

  private async run(): Promise<void> {
    if (this.stateValue !== 'idle') throw new WorkerStoppedError('start() was called after stop()');
    this.stateValue = 'running';
    const stopBegan = new Promise<void>((resolve) => this.stopController.signal.addEventListener('abort', () => resolve(), { once: true }));
    for (const w of this.options.startWarnings) this.options.logger.warn(w);
    try {
      this.openSlots();
    } catch (err) {
      // An unreadable tls.ca, say: a startup error like any other, so readiness
      // waiters reject with it and the state ends 'failed'.
      this.fail(err);
    }
    // The loops end only once stop began; stop() waits for them, all but one stuck in a
    // handler that ignores its signal, and start() must not wait for that one either.
    await Promise.race([Promise.all(this.loops), stopBegan]);
    await this.stop();
    if (this.fatal) throw this.fatal;
  }

  private openSlots(): void {
    this.openChannel();
    const host = this.host();
    this.slots = this.options.slotKinds.map((kind, i) => new Slot(i, kind, host));
    this.loops = this.slots.map((s) => s.run());
    this.options.logger.info('worker starting', {
      appWorkerId: this.options.appWorkerId,
      slots: this.slots.length,
      reservedRpcTasks: this.options.reservedRpcTasks,
    });
  }

  private async drainAndClose(): Promise<void> {
    const started = this.stateValue !== 'idle';
    this.stateValue = 'stopping';
    this.tracker.close(this.fatal ?? new WorkerStoppedError());
    this.stopController.abort();
    if (started) {
      for (const slot of this.slots) slot.drain();
      const all = Promise.all(this.loops);
      if (!(await settlesWithin(all, this.options.stopDrainTimeout))) {
        // Results already sent get a flush grace; everything else is reset now.
        const busy = this.slots.filter((s) => s.phase === 'running').length;
        this.options.logger.warn('stopDrainTimeout passed; aborting running handlers', { running: busy });
        const reason = new WorkerStoppedError('stopDrainTimeout passed');
        for (const slot of this.slots) if (slot.phase !== 'flushing') slot.reset(reason);
        if (!(await settlesWithin(all, FLUSH_GRACE_MS))) {
          for (const slot of this.slots) slot.reset(reason);
          // A handler that ignores its aborted signal must not hold stop() up for good (the
          // process would wait for its SIGKILL): its stream is reset, so the node fails its
          // attempt, and whatever it returns is never sent. Only the others are waited for.
          const stuck = this.slots.filter((s) => s.phase === 'running');
          for (const slot of stuck) {
            this.options.logger.warn('handler still running after its signal aborted; stop() does not wait for it', {
              slot: slot.index, ...slot.taskLabels,
            });
          }
          await Promise.all(this.loops.filter((_, i) => !stuck.includes(this.slots[i]!)));
        }
      }
      this.channel?.close();
    }
    this.stateValue = this.fatal ? 'failed' : 'stopped';
  }

  private openChannel(): void {
    this.channel = createSdkChannel(this.options.address, this.options.tls, this.options.keepaliveMs, this.options.reconnectBackoff);
    this.client = createClient(WorkerTaskServiceDefinition, this.channel);
    this.channelGen++;
  }

  /**
   * A node that drains asks every stream to reconnect, but new streams on the same
   * connection reach that node again: behind a connection balancer (a Kubernetes
   * ClusterIP Service, any L4 one) they were refused with ZD_DRAINING until the node
   * closed, drain.timeout later, and the worker's slots sat idle. Once per connection
   * (the first Reconnect on it), later streams go over a new one, which the balancer
   * sends to another node; streams still running on the old one finish there (grpc-js
   * closes a channel's connections gracefully).
   */
  private renewChannel(gen: number): void {
    if (gen !== this.channelGen || this.stateValue !== 'running') return;
    const old = this.channel;
    this.openChannel();
    this.options.logger.info('node asked to reconnect: later streams go over a new connection', { generation: this.channelGen });
    old?.close();
  }

  private host(): SlotHost {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const worker = this;
    return {
      options: this.options,
      get client() {
        return worker.client!;
      },
      get channelGen() {
        return worker.channelGen;
      },
      reconnectAsked: (gen) => this.renewChannel(gen),
      readiness: this.tracker,
      pongs: this.pongs,
      stopSignal: this.stopController.signal,
      get stopping() {
        return worker.stateValue !== 'running';
      },
      get hasRegistered() {
        return worker.hasRegistered;
      },
      onRegistered: (kind, reg) => this.onRegistered(kind, reg),
      fail: (err) => this.fail(err),
    };
  }

  /** The cap check: fatal on the worker's first registration, a warning later. */
  private onRegistered(kind: SlotKindName, reg: pb.IRegistered): boolean {
    if (this.stateValue !== 'running') return false;
    const cap = reg.max_concurrent_tasks_cap ?? 0; // 0: an older server that does not report it
    const limit = this.options.maxConcurrentTasks;
    if (cap > 0 && cap < limit) {
      if (!this.hasRegistered) {
        this.fail(new WorkerCapacityError(limit, cap));
        return false;
      }
      if (this.warnedCap !== cap) {
        this.warnedCap = cap;
        this.options.logger.warn('server maxConcurrentTasksCap is below maxConcurrentTasks; some slots will be rejected', { cap, maxConcurrentTasks: limit });
      }
    }
    this.hasRegistered = true;
    this.options.logger.debug('slot stream registered', { slotKind: kind, nodeId: reg.node_id, streamId: reg.stream_id });
    return true;
  }

  private fail(err: unknown): void {
    if (this.stateValue !== 'running') return;
    this.fatal = err;
    this.options.logger.error('worker failed; stopping', { error: err instanceof Error ? err.message : String(err) });
    void this.stop();
  }
}

/** True when the promise settled within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
