/**
 * A bench child process: a producer or a worker of zdmatch (SDK Client /
 * Worker) or of BullMQ (Queue / Worker), driven over IPC by `zdmatch bench`
 * (see protocol.ts). Forked as `node dist/cli/bench/child.js '<ChildConfig JSON>'`.
 *
 * Producers pace the same way for every system: a count phase sends batches
 * with a bounded number of calls in flight; a rate phase sends what is due
 * every ~1 ms (one Step alone, several as a batch).
 */
import {
  decodeInput, encodeInput, hiNow, Samples, type ChildConfig, type ChildMessage, type Phase, type ProducerCommand,
  type WorkerCommand,
} from './protocol';

const cfg = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;

function send(msg: ChildMessage): void {
  if (process.send) process.send(msg);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Sends `count` tasks numbered from `first`. */
type SendBatch = (phase: Phase, first: number, count: number) => Promise<void>;

interface Driver {
  sendBatch: SendBatch;
  close(): Promise<void>;
}

function redisOptions(url: string): { host: string; port: number; maxRetriesPerRequest: null } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null };
}

function bullQueueName(): string {
  return `bench-${cfg.runId}`;
}

async function producerDriver(): Promise<Driver> {
  if (cfg.system === 'bullmq') {
    const { Queue } = await import('bullmq');
    const queue = new Queue(bullQueueName(), { connection: redisOptions(cfg.redisUrl) });
    await queue.waitUntilReady();
    return {
      async sendBatch(phase, _first, count) {
        const t = hiNow();
        const data = { m: phase === 'main' ? 1 : 0, t };
        if (count === 1) await queue.add('s', data);
        else await queue.addBulk(Array.from({ length: count }, () => ({ name: 's', data })));
      },
      close: () => queue.close(),
    };
  }
  const { Client } = await import('../../sdk/client');
  const client = new Client({ address: cfg.address });
  const prefix = `${cfg.runId}-${cfg.index}`;
  const spec = (phase: Phase, i: number, input: Buffer) => ({
    tenant: cfg.tenant,
    flowId: cfg.flows > 0 ? `flow-${i % cfg.flows}` : `f-${prefix}-${phase[0]}${i}`,
    flowType: cfg.flowType,
    stepType: cfg.stepType,
    stepExecutionId: `${prefix}-${phase[0]}${i}`,
    input,
  });
  return {
    async sendBatch(phase, first, count) {
      const input = encodeInput(phase === 'main', hiNow());
      if (count === 1) await client.enqueueStep(spec(phase, first, input));
      else await client.enqueueSteps(Array.from({ length: count }, (_, k) => spec(phase, first + k, input)));
    },
    close: async () => client.close(),
  };
}

async function runProducer(): Promise<void> {
  const driver = await producerDriver();
  let numbered = 0; // ids keep counting across phases
  let sent = 0;
  let errors = 0;
  let lastError: string | undefined;
  const progress = setInterval(() => send({ type: 'progress', role: 'producer', index: cfg.index, count: sent, errors }), 200);
  progress.unref();

  const sendOne = async (phase: Phase, count: number) => {
    const first = numbered;
    numbered += count;
    try {
      await driver.sendBatch(phase, first, count);
      sent += count;
    } catch (err) {
      errors += count;
      lastError = (err as Error).message;
    }
  };

  process.on('message', (raw: ProducerCommand) => {
    void (async () => {
      if (raw.type === 'stop') {
        clearInterval(progress);
        await driver.close().catch(() => undefined);
        process.exit(0);
      }
      sent = 0;
      errors = 0;
      const firstSendAt = hiNow();
      if (raw.type === 'count') {
        let left = raw.n;
        const lane = async () => {
          while (left > 0) {
            const c = Math.min(raw.batch, left);
            left -= c;
            await sendOne(raw.phase, c);
          }
        };
        await Promise.all(Array.from({ length: Math.max(1, raw.inflight) }, lane));
      } else {
        const t0 = hiNow();
        let due = 0;
        let inflight = 0;
        const pending = new Set<Promise<void>>();
        for (;;) {
          const elapsed = hiNow() - t0;
          if (elapsed >= raw.durationMs) break;
          const target = Math.floor((elapsed * raw.rate) / 1000);
          while (due < target && inflight < raw.inflight) {
            const c = Math.min(raw.batch, target - due);
            due += c;
            inflight++;
            const p = sendOne(raw.phase, c).finally(() => {
              inflight--;
              pending.delete(p);
            });
            pending.add(p);
          }
          await sleep(1);
        }
        await Promise.all(pending);
      }
      send({ type: 'phaseDone', index: cfg.index, sent, errors, firstSendAt, lastSendAt: hiNow(), lastError });
    })().catch((err: Error) => send({ type: 'fatal', message: err.message }));
  });
  send({ type: 'ready', pid: process.pid });
}

/**
 * ms from a server-stamped time to `now` (hi-res): enqueuedAt and BullMQ's
 * job.timestamp are whole ms (Date.now() drops the fraction), so the stamp is
 * taken as the middle of its ms; against its start it read 0.5 ms long on average.
 */
const sinceWholeMs = (now: number, wholeMs: number) => now - (wholeMs + 0.5);

async function runWorker(): Promise<void> {
  const submitToStart = new Samples();
  const enqueueToStart = new Samples();
  const dispatch = new Samples();
  const enqueueToOutcome = new Samples();
  const submitTimeline = new Samples(2_000_000, 2);
  const submitted = (now: number, sentAt: number) => {
    submitToStart.add(now - sentAt);
    submitTimeline.add(now, now - sentAt);
  };
  let count = 0; // main-phase tasks
  let total = 0; // every task, warmup included
  let firstStartAt = 0;
  let lastStartAt = 0;
  const seen = (main: boolean, now: number) => {
    total++;
    if (!main) return false;
    count++;
    if (firstStartAt === 0) firstStartAt = now;
    lastStartAt = now;
    return true;
  };

  let close: () => Promise<void>;
  if (cfg.system === 'bullmq') {
    const { Worker } = await import('bullmq');
    const worker = new Worker(
      bullQueueName(),
      async (job) => {
        const now = hiNow();
        const d = job.data as { m: number; t: number };
        if (!seen(d.m === 1, now)) return;
        submitted(now, d.t);
        enqueueToStart.add(sinceWholeMs(now, job.timestamp));
        if (job.processedOn) dispatch.add(job.processedOn - job.timestamp);
      },
      { connection: redisOptions(cfg.redisUrl), concurrency: cfg.concurrency },
    );
    worker.on('completed', (job) => {
      if ((job.data as { m: number }).m === 1 && job.finishedOn) enqueueToOutcome.add(job.finishedOn - job.timestamp);
    });
    await worker.waitUntilReady();
    close = () => worker.close();
  } else {
    const { Worker } = await import('../../sdk/worker');
    const quiet = { debug() {}, info() {}, warn() {}, error: (m: string, f?: unknown) => process.stderr.write(`${m} ${JSON.stringify(f ?? {})}\n`) };
    const worker = new Worker({
      address: cfg.address,
      tenant: cfg.tenant,
      flowTypes: {
        [cfg.flowType]: {
          steps: {
            [cfg.stepType]: (ctx) => {
              const now = hiNow();
              const inp = decodeInput(ctx.input);
              if (!seen(inp?.main ?? false, now)) return;
              if (inp) submitted(now, inp.sentAt);
              const enq = ctx.enqueuedAt?.getTime();
              if (enq) {
                enqueueToStart.add(sinceWholeMs(now, enq));
                const st = ctx.startedAt?.getTime();
                if (st) dispatch.add(st - enq);
              }
            },
          },
        },
      },
      maxConcurrentTasks: cfg.concurrency,
      reservedRpcTasks: 0,
      logger: quiet,
      stopDrainTimeout: 2000,
    });
    const running = worker.start();
    running.catch((err: Error) => send({ type: 'fatal', message: err.message }));
    await worker.waitPullRegistered(AbortSignal.timeout(30_000));
    close = async () => {
      await worker.stop();
      await running.catch(() => undefined);
    };
  }

  const progress = setInterval(() => send({ type: 'progress', role: 'worker', index: cfg.index, count: total, errors: 0 }), 100);
  progress.unref();
  process.on('message', (raw: WorkerCommand) => {
    if (raw.type === 'collect') {
      send({
        type: 'samples', index: cfg.index, count,
        submitToStart: submitToStart.values(), enqueueToStart: enqueueToStart.values(), dispatch: dispatch.values(),
        enqueueToOutcome: enqueueToOutcome.values(), submitTimeline: submitTimeline.values(), firstStartAt, lastStartAt,
      });
    } else if (raw.type === 'stop') {
      clearInterval(progress);
      const force = setTimeout(() => process.exit(0), 5000);
      force.unref();
      void close().finally(() => process.exit(0));
    }
  });
  send({ type: 'ready', pid: process.pid });
}

process.on('disconnect', () => process.exit(0)); // the parent went away
(cfg.role === 'worker' ? runWorker() : runProducer()).catch((err: Error) => {
  send({ type: 'fatal', message: err.message });
  setTimeout(() => process.exit(1), 100);
});
