/**
 * Every call of a Client (and of a FetchClient) listens on the client's close
 * signal, and every slot of a Worker waits on the worker's stop signal while it
 * reconnects. Node warns of a "possible EventTarget memory leak" past 10
 * listeners on one signal: a Client with 11 calls in flight, or a 64-slot worker
 * whose node restarted, printed it on every run. The SDK's own signals take
 * any number of listeners; they are removed as calls end.
 * Each case runs the built SDK (dist/) in a process of its own and reads its
 * stderr, where Node prints the warning.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { freePorts } from '../helpers/ports';
import { REPO_ROOT } from '../helpers/node-process';

const redis = useEmbeddedRedis();
let t: TestNode;
beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('listeners'));
});
afterEach(() => t.close());

const SDK = JSON.stringify(path.join(REPO_ROOT, 'dist', 'index.js'));

/** Runs `body` (an async function body with the SDK's exports in scope) in a node process; its stderr. */
function runSdk(body: string): Promise<{ code: number | null; stderr: string }> {
  const script = `const sdk = require(${SDK}); (async () => { ${body} })().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', script], { timeout: 30_000 }, (err, _stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr });
    });
  });
}

it('a Client with 40 calls in flight warns of nothing', async () => {
  const r = await runSdk(`
    const c = new sdk.Client({ address: ${JSON.stringify(t.node.apiAddress)} });
    const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => c.enqueueStep({
      tenant: 'acme', flowId: 'f' + i, flowType: 'order', stepType: 's', stepExecutionId: 'x' })));
    await Promise.all(ids.map((x) => c.waitOutcome(x.taskId, { waitMs: 300 })));
    c.close();`);
  expect(r.stderr).not.toMatch(/MaxListenersExceededWarning/);
  expect(r.code).toBe(0);
}, 40_000);

it('a FetchClient with 40 long polls in flight warns of nothing', async () => {
  const r = await runSdk(`
    const f = new sdk.FetchClient({ address: ${JSON.stringify(t.node.apiAddress)}, workerId: 'fw' });
    await Promise.all(Array.from({ length: 40 }, () => f.fetchAndLock({ topics: [{ tenant: 'acme', flowType: 'order', stepType: 's' }], waitMs: 300 })));
    f.close();`);
  expect(r.stderr).not.toMatch(/MaxListenersExceededWarning/);
  expect(r.code).toBe(0);
}, 40_000);

it('a 64-slot worker reconnecting to a node that is not there warns of nothing', async () => {
  const [port] = await freePorts(1);
  const r = await runSdk(`
    let lost = 0;
    const log = (m) => { if (m === 'slot stream lost; reconnecting') lost++; };
    const w = new sdk.Worker({ address: '127.0.0.1:${port}', tenant: 'acme', maxConcurrentTasks: 64,
      logger: { debug: log, info: log, error: log, warn: log },
      flowTypes: { order: { steps: { s: async () => 'x' } } } });
    const running = w.start().catch(() => undefined);
    const t0 = Date.now();
    while (lost < 128 && Date.now() - t0 < 15000) await new Promise((r) => setTimeout(r, 50));
    if (lost < 128) throw new Error('only ' + lost + ' reconnects');
    await w.stop();
    await running;`);
  expect(r.stderr).not.toMatch(/MaxListenersExceededWarning/);
  expect(r.code).toBe(0);
}, 40_000);
