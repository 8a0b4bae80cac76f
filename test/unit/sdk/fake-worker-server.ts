/**
 * A hand-written WorkerTaskService on a real nice-grpc server (127.0.0.1:0)
 * that tests script stream by stream: they see every WorkerFrame and decide
 * each ServerFrame, status and end.
 */
import { createServer, ServerError, Status, type CallContext, type Server } from 'nice-grpc';
import { pb, WorkerTaskServiceDefinition } from '../../../src/wire';

type Out = pb.IServerFrame | ServerError | 'end';

export class FakeStream {
  readonly received: pb.WorkerFrame[] = [];
  readonly metadata: CallContext['metadata'];
  /** The client's address and port: streams of one connection share it. */
  readonly peer: string;
  halfClosed = false;
  cancelled = false;
  private readonly out: Out[] = [];
  private wakeOut: (() => void) | null = null;
  private readonly frameWaiters: Array<() => void> = [];

  constructor(ctx: CallContext) {
    this.metadata = ctx.metadata;
    this.peer = ctx.peer;
    ctx.signal.addEventListener('abort', () => {
      this.cancelled = true;
      this.notify();
    });
  }

  get register(): pb.IRegister {
    return this.received[0]!.register!;
  }

  send(frame: pb.IServerFrame): void {
    this.push(frame);
  }

  /** Ends the response stream with OK. */
  end(): void {
    this.push('end');
  }

  fail(status: Status, message: string): void {
    this.push(new ServerError(status, message));
  }

  /** Resolves with the next frame of `kind` not yet consumed by an earlier call. */
  async next(kind: pb.WorkerFrame['frame'], timeoutMs = 5000): Promise<pb.WorkerFrame> {
    const seen = this.consumed.get(kind) ?? 0;
    await this.until(() => this.received.filter((f) => f.frame === kind).length > seen, `a ${kind} frame`, timeoutMs);
    this.consumed.set(kind, seen + 1);
    return this.received.filter((f) => f.frame === kind)[seen]!;
  }

  async until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((r) => {
        this.frameWaiters.push(r);
        setTimeout(r, 20);
      });
    }
  }

  private readonly consumed = new Map<string | undefined, number>();

  /** @internal */ receive(frame: pb.WorkerFrame): void {
    this.received.push(frame);
    this.notify();
  }
  /** @internal */ onHalfClose(): void {
    this.halfClosed = true;
    this.notify();
  }
  /** @internal */ async *responses(): AsyncGenerator<pb.IServerFrame> {
    for (;;) {
      const item = this.out.shift();
      if (item === undefined) {
        if (this.cancelled) return;
        await new Promise<void>((r) => (this.wakeOut = r));
        continue;
      }
      if (item === 'end') return;
      if (item instanceof ServerError) throw item;
      yield item;
    }
  }

  private push(item: Out): void {
    this.out.push(item);
    const w = this.wakeOut;
    this.wakeOut = null;
    w?.();
  }

  private notify(): void {
    this.frameWaiters.splice(0).forEach((w) => w());
    const w = this.wakeOut;
    this.wakeOut = null;
    w?.();
  }
}

export interface FakeServerOptions {
  /** Answers a Register; default: Registered with cap 256. Return false to answer nothing. */
  onRegister?: (s: FakeStream, reg: pb.IRegister) => void;
  /** End the response stream when the worker half-closes (what the real server does). @default true */
  endOnHalfClose?: boolean;
}

export class FakeWorkerServer {
  readonly streams: FakeStream[] = [];
  address = '';
  private server: Server | undefined;
  private readonly listeners: Array<(s: FakeStream) => void> = [];

  constructor(private readonly options: FakeServerOptions = {}) {}

  async start(): Promise<this> {
    this.server = createServer();
    const self = this;
    this.server.add(WorkerTaskServiceDefinition, {
      async *connect(requests: AsyncIterable<pb.WorkerFrame>, ctx: CallContext) {
        const s = new FakeStream(ctx);
        self.streams.push(s);
        void (async () => {
          try {
            for await (const f of requests) {
              s.receive(f);
              if (f.frame === 'register') (self.options.onRegister ?? registerOk())(s, f.register!);
            }
            s.onHalfClose();
            if (self.options.endOnHalfClose ?? true) s.end();
          } catch {
            /* cancelled */
          }
        })();
        self.listeners.splice(0).forEach((l) => l(s));
        yield* s.responses();
      },
    });
    const port = await this.server.listen('127.0.0.1:0');
    this.address = `127.0.0.1:${port}`;
    return this;
  }

  /** Streams registered so far (a Register frame seen). */
  registered(kind?: pb.SlotKind): FakeStream[] {
    return this.streams.filter((s) => s.received[0]?.frame === 'register' && (kind === undefined || s.register.slot_kind === kind));
  }

  async waitStreams(n: number, timeoutMs = 5000): Promise<FakeStream[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.registered().length < n) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} streams (have ${this.registered().length})`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.registered();
  }

  async stop(): Promise<void> {
    await this.server?.forceShutdown();
  }
}

export function registerOk(cap = 256): (s: FakeStream, reg: pb.IRegister) => void {
  return (s) => s.send({ registered: { max_concurrent_tasks_cap: cap, ping_interval_ms: 20000, server_protocol_version: 4, node_id: 'n1' } });
}

/** A logger that records, for assertions. */
export function recordingLogger() {
  const lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
