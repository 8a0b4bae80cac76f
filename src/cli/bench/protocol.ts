/**
 * Messages between `zdmatch bench` and its child processes (IPC with
 * `serialization: 'advanced'`, so typed arrays travel as they are).
 */

/** The system under test: zdmatch itself, or the peers it is compared with. */
export type BenchSystem = 'zdmatch' | 'bullmq';

/** What a child is started with (JSON in argv[2]). */
export interface ChildConfig {
  role: 'worker' | 'producer';
  system: BenchSystem;
  index: number;
  /** zdmatch gRPC API address. */
  address: string;
  /** redis://host:port (BullMQ's store). */
  redisUrl: string;
  tenant: string;
  flowType: string;
  stepType: string;
  /** Slots (zdmatch) or concurrency (BullMQ) of a worker process. */
  concurrency: number;
  /** Run id: makes step execution ids, BullMQ queue names unique. */
  runId: string;
  /** 0 = a new flow per Step; else Steps cycle over this many flows (sticky routing). */
  flows: number;
}

export type Phase = 'warmup' | 'main';

export type ProducerCommand =
  | { type: 'count'; phase: Phase; n: number; batch: number; inflight: number }
  | { type: 'rate'; phase: Phase; rate: number; durationMs: number; batch: number; inflight: number }
  | { type: 'stop' };

export type WorkerCommand = { type: 'collect' } | { type: 'stop' };

export type ChildMessage =
  | { type: 'ready'; pid: number }
  | { type: 'progress'; role: 'worker' | 'producer'; index: number; count: number; errors: number }
  | { type: 'phaseDone'; index: number; sent: number; errors: number; firstSendAt: number; lastSendAt: number; lastError?: string }
  | {
      type: 'samples';
      index: number;
      /** Main-phase tasks seen by this worker. */
      count: number;
      /** Producer send (hi-res wall clock) → handler start, ms. */
      submitToStart: Float64Array;
      /** Server enqueuedAt (ms) → handler start, ms. */
      enqueueToStart: Float64Array;
      /** Server enqueuedAt → server startedAt (the dispatch), ms. */
      dispatch: Float64Array;
      /** Enqueue → outcome written, ms (BullMQ only: zdmatch reads its outcome stream). */
      enqueueToOutcome: Float64Array;
      /** Pairs: handler start (hi-res wall clock), then its submit → start (ms): the latency over time. */
      submitTimeline: Float64Array;
      firstStartAt: number;
      lastStartAt: number;
    }
  | { type: 'fatal'; message: string };

/** Wall clock with sub-ms resolution; comparable across processes on one machine. */
export function hiNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Task input: 1 byte phase tag (0 warmup, 1 main) + the producer's send time (float64 LE). */
export function encodeInput(main: boolean, sentAt: number): Buffer {
  const b = Buffer.allocUnsafe(9);
  b[0] = main ? 1 : 0;
  b.writeDoubleLE(sentAt, 1);
  return b;
}

export function decodeInput(b: Buffer): { main: boolean; sentAt: number } | undefined {
  if (b.length !== 9) return undefined;
  return { main: b[0] === 1, sentAt: b.readDoubleLE(1) };
}

/**
 * A growable Float64 sample buffer with a hard cap (reservoir sampling past it).
 * A sample is `width` numbers (2 for a timed sample: when, then the value), kept
 * and replaced together.
 */
export class Samples {
  private buf: Float64Array;
  private n = 0;
  private seen = 0;

  constructor(private readonly cap = 2_000_000, private readonly width: 1 | 2 = 1) {
    this.buf = new Float64Array(1024 * width);
  }

  add(v: number, w = 0): void {
    this.seen++;
    let i = this.n;
    if (i < this.cap) {
      if ((i + 1) * this.width > this.buf.length) {
        const next = new Float64Array(Math.min(this.cap * this.width, this.buf.length * 2));
        next.set(this.buf);
        this.buf = next;
      }
      this.n++;
    } else {
      i = Math.floor(Math.random() * this.seen);
      if (i >= this.cap) return;
    }
    this.buf[i * this.width] = v;
    if (this.width === 2) this.buf[i * 2 + 1] = w;
  }

  values(): Float64Array {
    return this.buf.slice(0, this.n * this.width);
  }
}
