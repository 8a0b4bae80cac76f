/**
 * A transparent WorkerTaskService proxy between an SDK Worker and a real
 * node: every frame is forwarded unchanged and recorded with its time, so a
 * test can observe what the SDK sends (Pongs, results, half-closes) while the
 * real server does the work. It keeps the stream semantics: a worker's reset
 * resets the upstream call, a half-close half-closes it, and an upstream
 * status reaches the worker unchanged (code and message).
 *
 *   const tap = await startWorkerTap(t.node.apiAddress);
 *   new Worker({ address: tap.address, ... });
 *   tap.frames.filter((f) => f.kind === 'pong')
 */
import {
  ClientError, createChannel, createClient, createServer, Metadata, ServerError, type CallContext,
} from 'nice-grpc';
import { pb, WorkerTaskServiceDefinition } from '../../src/wire';

export interface TappedFrame {
  /** `up`: worker → server; `down`: server → worker. */
  dir: 'up' | 'down';
  /** Proxied stream number, from 1 in the order streams opened. */
  stream: number;
  /** Date.now() when the frame passed. */
  at: number;
  /**
   * The frame's oneof case; `half-close-held` when the worker's side ended,
   * `half-close` when that end was passed on upstream.
   */
  kind: string;
  frame: pb.IWorkerFrame | pb.IServerFrame | null;
}

export interface WorkerTap {
  readonly address: string;
  readonly frames: TappedFrame[];
  /**
   * Holds every worker half-close (of streams open now or later) until the
   * returned function is called, so a test can make the server write to a
   * stream the worker already half-closed.
   */
  holdHalfCloses(): () => void;
  close(): Promise<void>;
}

const FORWARDED_HEADERS = ['authorization', 'zd-protocol-version'];

export async function startWorkerTap(upstreamAddress: string): Promise<WorkerTap> {
  const channel = createChannel(upstreamAddress);
  const upstream = createClient(WorkerTaskServiceDefinition, channel);
  const frames: TappedFrame[] = [];
  let seq = 0;
  let hold: Promise<void> = Promise.resolve();

  const server = createServer();
  server.add(WorkerTaskServiceDefinition, {
    async *connect(requests: AsyncIterable<pb.WorkerFrame>, context: CallContext): AsyncIterable<pb.IServerFrame> {
      const stream = ++seq;
      const abort = new AbortController();
      const onAbort = () => abort.abort();
      context.signal.addEventListener('abort', onAbort, { once: true });
      const metadata = new Metadata();
      for (const h of FORWARDED_HEADERS) for (const v of context.metadata.getAll(h)) metadata.append(h, String(v));
      async function* up(): AsyncIterable<pb.IWorkerFrame> {
        for await (const f of requests) {
          frames.push({ dir: 'up', stream, at: Date.now(), kind: f.frame ?? 'empty', frame: f });
          yield f;
        }
        frames.push({ dir: 'up', stream, at: Date.now(), kind: 'half-close-held', frame: null });
        await hold;
        frames.push({ dir: 'up', stream, at: Date.now(), kind: 'half-close', frame: null });
      }
      try {
        for await (const f of upstream.connect(up(), { signal: abort.signal, metadata })) {
          frames.push({ dir: 'down', stream, at: Date.now(), kind: f.frame ?? 'empty', frame: f });
          yield f;
        }
      } catch (err) {
        if (err instanceof ClientError) throw new ServerError(err.code, err.details);
        throw err;
      } finally {
        context.signal.removeEventListener('abort', onAbort);
        abort.abort();
      }
    },
  });
  const port = await server.listen('127.0.0.1:0');
  return {
    address: `127.0.0.1:${port}`,
    frames,
    holdHalfCloses() {
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      return release;
    },
    async close() {
      await Promise.race([server.shutdown(), new Promise((r) => setTimeout(r, 1000))]);
      server.forceShutdown();
      channel.close();
    },
  };
}
