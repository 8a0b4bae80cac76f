/**
 * A Worker's reconnectBackoff sets both how often its slots open a stream again
 * after one failed and how often its connection is redialled. Against a real
 * loopback listener that accepts each connection and closes it at once (a node
 * that is starting or dying), over 0.8 s.
 */
import { Worker } from '../../../src';
import { closingListener } from '../../helpers/closing-listener';
import { recordingLogger } from './fake-worker-server';

const WINDOW_MS = 800;

/** Dials of the Worker's connection and slot streams that failed within WINDOW_MS, for one slot. */
async function attemptsWithin(reconnectBackoff: { initialMs: number; maxMs: number }): Promise<{ dials: number; streams: number }> {
  const listener = await closingListener();
  const logger = recordingLogger();
  const w = new Worker({
    address: listener.address, tenant: 't1', maxConcurrentTasks: 1, reservedRpcTasks: 0,
    logger, reconnectBackoff, flowTypes: { order: { steps: { charge: () => 'ok' } } },
  });
  const running = w.start().catch((e: unknown) => e);
  try {
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    return { dials: listener.dials(), streams: logger.lines.filter((l) => /^slot stream .*reconnecting$/.test(l.msg)).length };
  } finally {
    await w.stop();
    await running;
    await listener.close();
  }
}

it('has a Worker open streams and redial every initialMs, not on the default backoff', async () => {
  const [fast, slow] = await Promise.all([attemptsWithin({ initialMs: 20, maxMs: 20 }), attemptsWithin({ initialMs: 1000, maxMs: 1000 })]);
  // Every 10–20 ms for the slot and 16–24 ms for the connection: dozens in 0.8 s. The default
  // (100 ms doubling for the slot, growing by 1.6 for the connection) makes 4 or 5 of each,
  // and a 1 s backoff 1 or 2.
  expect(fast.streams).toBeGreaterThanOrEqual(15);
  expect(fast.dials).toBeGreaterThanOrEqual(15);
  expect(slow.streams).toBeGreaterThanOrEqual(1);
  expect(slow.streams).toBeLessThanOrEqual(2);
  expect(slow.dials).toBeGreaterThanOrEqual(1);
  expect(slow.dials).toBeLessThanOrEqual(2);
});
