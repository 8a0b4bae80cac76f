/**
 * One connection carries all of a worker's slot streams, and HTTP/2 holds back
 * the streams past the peer's limit on concurrent streams (the node's
 * limits.maxStreamsPerConnection, or a proxy's own: nginx 128, HAProxy 100).
 * Those slots never register. The reserved RPC slots open last, so the worker
 * never became ready, and nothing in its log said why: each such stream is
 * now named in a warning.
 */
import { Worker } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger } from '../helpers/sdk';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode | undefined;
let w: Worker | undefined;
afterEach(async () => {
  await w?.stop();
  await t?.close();
});

const MSG = 'slot stream not answered: no Registered from the node';

it('warns of each slot stream the connection holds back past the streams it may open, and of no other', async () => {
  t = await startTestNode(redis.url, uniquePrefix('unopened'), { 'limits.maxStreamsPerConnection': 3 });
  const logger = recordingLogger();
  w = new Worker({
    address: t.node.apiAddress, tenant: 'acme', maxConcurrentTasks: 5, reservedRpcTasks: 1, logger,
    flowTypes: { order: { steps: { charge: () => 'ok' } } }, _internal: { unregisteredWarnMs: 300 },
  });
  void w.start().catch(() => undefined);
  // Three streams register; the other two wait for a stream of the connection to end.
  await waitFor(() => w!.readiness().queues.find((q) => q.slotKind === 'STEP_AND_RPC')?.hasRegisteredStream, { timeoutMs: 5000 });
  expect(w.readiness().isReady).toBe(false); // the RPC-only slot opens last: it is one held back
  await waitFor(() => logger.count(MSG) >= 2, { timeoutMs: 5000, description: 'a warning for each stream held back' });
  const warnings = logger.lines.filter((l) => l.msg === MSG);
  expect(warnings.every((l) => l.level === 'warn')).toBe(true);
  expect(warnings.map((l) => l.fields?.slotKind).sort()).toEqual(['RPC_ONLY', 'STEP_AND_RPC']);
  expect(warnings[0]!.fields).toMatchObject({ waitedMs: 300, maxConcurrentTasks: 5 });
  expect(String(warnings[0]!.fields?.hint)).toContain('limits.maxStreamsPerConnection');
  // Once each, and none for the streams that registered.
  await sleep(600);
  expect(logger.count(MSG)).toBe(2);
});

it('says nothing of streams the node answers', async () => {
  t = await startTestNode(redis.url, uniquePrefix('answered'));
  const logger = recordingLogger();
  w = new Worker({
    address: t.node.apiAddress, tenant: 'acme', maxConcurrentTasks: 5, reservedRpcTasks: 1, logger,
    // Past the time a loaded machine may take to answer a stream (a CI run saw all five answered after 300 ms).
    flowTypes: { order: { steps: { charge: () => 'ok' } } }, _internal: { unregisteredWarnMs: 2000 },
  });
  const started = Date.now();
  void w.start().catch(() => undefined);
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  await sleep(Math.max(0, started + 2300 - Date.now()));
  expect(logger.count(MSG)).toBe(0);
});
