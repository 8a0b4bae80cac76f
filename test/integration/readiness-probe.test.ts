/**
 * The readiness probe of docs/readiness.md (examples/readiness-probe.ts)
 * against a real node: 503 before registration, 200 once registered and
 * across a node restart, 503 when the node rejects a slot kind permanently.
 */
import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { serveReadiness } from '../../examples/readiness-probe';
import { Worker, WorkerCapacityError, type WorkerOptions } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger } from '../helpers/sdk';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const root = path.resolve(__dirname, '..', '..');
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await Promise.resolve(fn()).catch(() => undefined);
});

interface ProbeAnswer {
  status: number;
  body: { ready: boolean; queues: Array<{ slotKind: string; hasRegisteredStream: boolean; lastPermanentError: string | null }> };
}

/** Serves the probe on a free port; `ask()` GETs /readyz. */
async function probe(worker: Worker) {
  const server: http.Server = await serveReadiness(worker, 0, '127.0.0.1');
  cleanups.push(() => new Promise((r) => server.close(r)));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ask = async (): Promise<ProbeAnswer> => {
    const res = await fetch(`${base}/readyz`);
    return { status: res.status, body: (await res.json()) as ProbeAnswer['body'] };
  };
  return { base, ask };
}

async function node(prefix: string, overrides: Record<string, unknown> = {}): Promise<TestNode> {
  const t = await startTestNode(redis.url, prefix, overrides);
  cleanups.push(() => t.close());
  return t;
}

function worker(address: string, options: Partial<WorkerOptions> = {}): Worker {
  const w = new Worker({
    address, tenant: 'acme', flowTypes: { order: { steps: { charge: () => 'ok' } } }, maxConcurrentTasks: 2,
    logger: recordingLogger(), reconnectBackoff: { initialMs: 20, maxMs: 100 }, ...options,
  });
  cleanups.push(() => w.stop());
  return w;
}

it('is the code docs/readiness.md shows', () => {
  const doc = fs.readFileSync(path.join(root, 'docs', 'readiness.md'), 'utf8');
  const example = fs.readFileSync(path.join(root, 'examples', 'readiness-probe.ts'), 'utf8');
  const code = example
    .slice(example.indexOf('import http'))
    .replace("from '../src'; // in your app: from 'zdmatch'", "from 'zdmatch';");
  expect(code).toContain("from 'zdmatch';");
  expect(doc).toContain('```ts\n' + code + '```');
});

it('answers 200 once registered and across a node restart, 503 when the node rejects a slot kind permanently', async () => {
  const prefix = uniquePrefix('probe');
  const t1 = await node(prefix);
  const port = t1.node.apiAddress.slice(t1.node.apiAddress.lastIndexOf(':') + 1);
  const w = worker(t1.node.apiAddress); // limit 2, default reserve: one STEP_AND_RPC + one RPC_ONLY
  const { base, ask } = await probe(w);

  expect(await ask()).toEqual({
    status: 503,
    body: {
      ready: false,
      queues: [
        { slotKind: 'STEP_AND_RPC', hasRegisteredStream: false, lastPermanentError: null },
        { slotKind: 'RPC_ONLY', hasRegisteredStream: false, lastPermanentError: null },
      ],
    },
  });
  void w.start();
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  expect(await ask()).toMatchObject({ status: 200, body: { ready: true } });

  // Node gone: no registered stream, but no permanent error either.
  await t1.close();
  await waitFor(() => w.readiness().queues.every((q) => !q.hasRegisteredStream), { description: 'the streams to go' });
  expect(await ask()).toMatchObject({ status: 200, body: { ready: true } });

  // Back, with a cap of one stream per worker: one kind registers, the other is rejected for good.
  const t2 = await node(prefix, { 'api.listen': `127.0.0.1:${port}`, 'matching.maxConcurrentTasksCap': 1 });
  const down = await waitFor(async () => {
    const a = await ask();
    return a.status === 503 ? a : undefined;
  }, { timeoutMs: 8000, description: 'a 503' });
  expect(down.body.ready).toBe(false);
  const rejected = down.body.queues.find((q) => q.lastPermanentError !== null)!;
  expect(rejected.hasRegisteredStream).toBe(false);
  expect(rejected.lastPermanentError).toContain('ZD_TOO_MANY_STREAMS_PER_WORKER');
  expect(rejected.lastPermanentError).toContain('matching.maxConcurrentTasksCap = 1');
  expect(down.body.queues.filter((q) => q.hasRegisteredStream)).toHaveLength(1);

  // A worker over the cap from its first registration fails to start; its probe says 503 too.
  const over = worker(t2.node.apiAddress);
  const { ask: askOver } = await probe(over);
  await expect(over.start()).rejects.toBeInstanceOf(WorkerCapacityError);
  expect(await askOver()).toMatchObject({ status: 503, body: { ready: false } });

  const other = await fetch(`${base}/metrics`);
  expect(other.status).toBe(404);
});
