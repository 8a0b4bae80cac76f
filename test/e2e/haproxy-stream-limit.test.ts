/**
 * deploy/haproxy/zdmatch.cfg raises HAProxy's limit on concurrent HTTP/2 streams
 * per client connection (tune.h2.max-concurrent-streams, 100 by default) because
 * one SDK connection carries one stream per worker slot. Run through a real
 * HAProxy with that limit set low: the slots past it never register, and the
 * worker names each one held back; with the shipped limit every slot registers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { REPO_ROOT } from '../helpers/node-process';
import { freePort } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger } from '../helpers/sdk';
import { requireCommand, runOk } from '../helpers/tools';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const MSG = 'slot stream not answered: no Registered from the node';

let t: TestNode | undefined;
let w: Worker | undefined;
let lb: ChildProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  await w?.stop();
  w = undefined;
  if (lb && lb.exitCode === null) {
    const exited = new Promise((r) => lb!.once('exit', r));
    lb.kill('SIGKILL');
    await exited;
  }
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The shipped file with its stream limit set to `limit`, listening on `port`, its one server the test's node (no health check). */
function config(port: number, node: string, limit: number | undefined): string {
  const shipped = fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'haproxy', 'zdmatch.cfg'), 'utf8');
  const text = shipped.split('\n')
    .filter((l) => !l.includes('# zdmatch server') || l.includes('server n1 '))
    .map((l) => (l.includes('# zdmatch server') ? `    server n1 ${node} proto h2` : l))
    .map((l) => (l.includes('# zdmatch listen') ? l.replace(/bind \S+/, `bind 127.0.0.1:${port}`) : l))
    .map((l) => (l.includes('# zdmatch log') ? '    log stderr format raw local0 notice' : l))
    .map((l) => (limit !== undefined && /^\s+tune\.h2\.max-concurrent-streams \d+/.test(l) ? `    tune.h2.max-concurrent-streams ${limit}` : l))
    .join('\n');
  expect(text).toContain(`server n1 ${node} proto h2`);
  if (limit !== undefined) expect(text).toContain(`tune.h2.max-concurrent-streams ${limit}\n`);
  else expect(text).toContain('tune.h2.max-concurrent-streams 1000\n');
  return text;
}

async function throughHaproxy(limit: number | undefined): Promise<string> {
  const bin = requireCommand('haproxy', 'haproxy');
  t = await startTestNode(redis.url, uniquePrefix('hplimit'));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-hplimit-'));
  const port = await freePort();
  const cfg = path.join(dir, 'zdmatch.cfg');
  fs.writeFileSync(cfg, config(port, t.node.apiAddress, limit));
  runOk(bin, ['-c', '-f', cfg]);
  lb = spawn(bin, ['-db', '-f', cfg], { stdio: 'ignore' });
  return `127.0.0.1:${port}`;
}

function startWorker(address: string, slots: number) {
  const logger = recordingLogger();
  w = new Worker({
    address, tenant: 'acme', maxConcurrentTasks: slots, reservedRpcTasks: 1, logger,
    flowTypes: { order: { steps: { charge: () => 'ok' } } }, _internal: { unregisteredWarnMs: 300 },
  });
  void w.start().catch(() => undefined);
  return logger;
}

it('holds back the slot streams past a low tune.h2.max-concurrent-streams, and the worker names each', async () => {
  const logger = startWorker(await throughHaproxy(3), 5);
  // Three streams reach the node; the other two wait at HAProxy for one of those to end.
  await waitFor(() => t!.node.gateway.streamCount === 3, { timeoutMs: 8000, description: 'three slot streams registered' });
  await waitFor(() => logger.count(MSG) >= 2, { timeoutMs: 8000, description: 'a warning for each of the two streams held back' });
  await sleep(300);
  expect(t!.node.gateway.streamCount).toBe(3);
  const warnings = logger.lines.filter((l) => l.msg === MSG);
  // A stream HAProxy let through but a loaded machine answered late may warn too: at least the two held back.
  expect(warnings.length).toBeGreaterThanOrEqual(2);
  expect(warnings.every((l) => l.fields?.maxConcurrentTasks === 5)).toBe(true);
  expect(String(warnings[0]!.fields?.hint)).toContain('HAProxy tune.h2.max-concurrent-streams');
}, 30_000);

it('registers every slot stream through the shipped limit', async () => {
  startWorker(await throughHaproxy(undefined), 5);
  await waitFor(() => t!.node.gateway.streamCount === 5, { timeoutMs: 8000, description: 'all five slot streams registered through HAProxy' });
  // The node counts a stream once it registers it; the worker is ready once its Registered arrives.
  await waitFor(() => w!.readiness().isReady, { timeoutMs: 8000, description: 'the worker ready through HAProxy' });
}, 30_000);
