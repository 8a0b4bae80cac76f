/**
 * One worker stream driven frame by frame (no SDK), to test the server side of
 * the protocol exactly: what it sends, and what it does with each frame.
 */
import type { createClient, Metadata } from 'nice-grpc';
import { pb, PROTOCOL_VERSION, type WorkerTaskServiceDefinition } from '../../src/wire';

type WorkerClient = ReturnType<typeof createClient<typeof WorkerTaskServiceDefinition>>;

export interface RawSlot {
  /** The next server frame (rejects with the stream's error). */
  next(timeoutMs?: number): Promise<pb.ServerFrame>;
  /** The next frame of a kind, skipping pings. */
  nextOf(kind: string, timeoutMs?: number): Promise<pb.ServerFrame>;
  send(frame: pb.IWorkerFrame): void;
  /** Half-close: end the request side. */
  halfClose(): void;
  /** Reset: cancel the call. */
  reset(): void;
  /** Resolves with the stream's end (null) or error. */
  ended: Promise<Error | null>;
}

export function registerFrame(over: Partial<pb.IRegister> = {}): pb.IWorkerFrame {
  return {
    register: {
      protocol_version: PROTOCOL_VERSION, tenant: 'acme', app_worker_id: 'w1', flow_types: ['order'],
      slot_kind: pb.SlotKind.STEP_AND_RPC, task_limit: 1, sdk_name: 'raw', sdk_version: '0', ...over,
    },
  };
}

export function openSlot(client: WorkerClient, first: pb.IWorkerFrame = registerFrame(), metadata?: Metadata): RawSlot {
  const outgoing: pb.IWorkerFrame[] = [first];
  let wake: (() => void) | undefined;
  let closed = false;
  const abort = new AbortController();
  async function* requests() {
    for (;;) {
      while (outgoing.length > 0) yield outgoing.shift()!;
      if (closed) return;
      await new Promise<void>((r) => (wake = r));
    }
  }
  const frames: pb.ServerFrame[] = [];
  const waiters: ((f: pb.ServerFrame | Error) => void)[] = [];
  let failure: Error | undefined;
  const ended = (async () => {
    try {
      for await (const f of client.connect(requests(), { signal: abort.signal, metadata })) {
        const w = waiters.shift();
        if (w) w(f);
        else frames.push(f);
      }
      failure = new Error('stream ended');
      return null;
    } catch (err) {
      failure = err as Error;
      return err as Error;
    } finally {
      for (const w of waiters.splice(0)) w(failure ?? new Error('stream ended'));
    }
  })();
  const next = (timeoutMs = 5000) =>
    new Promise<pb.ServerFrame>((resolve, reject) => {
      const f = frames.shift();
      if (f) return resolve(f);
      if (failure) return reject(failure);
      const waiter = (x: pb.ServerFrame | Error) => {
        clearTimeout(t);
        if (x instanceof Error) reject(x);
        else resolve(x);
      };
      // A waiter that timed out leaves the queue, so the next frame is not lost to it.
      const t = setTimeout(() => {
        const i = waiters.indexOf(waiter);
        if (i >= 0) waiters.splice(i, 1);
        reject(new Error(`no frame within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.push(waiter);
    });
  return {
    next,
    async nextOf(kind, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const f = await next(Math.max(1, until - Date.now()));
        if (f.frame === kind) return f;
        if (f.frame !== 'ping') throw new Error(`expected ${kind}, got ${String(f.frame)}`);
      }
    },
    send(frame) {
      outgoing.push(frame);
      wake?.();
    },
    halfClose() {
      closed = true;
      wake?.();
    },
    reset() {
      abort.abort();
    },
    ended,
  };
}
