/**
 * The SDK's deadlines and intervals do not move with the wall clock. Set back by
 * X (an NTP step, a VM resumed), an enqueue's timeout ran X late, and pongs and
 * heartbeats due by it waited X: the node reset the stream as silent, and the
 * attempt failed as worker lost. Here Date.now is set back by seconds mid-way.
 */
import net from 'node:net';
import { Client, ZdDeadlineExceededError } from '../../../src';
import { PongSweep } from '../../../src/sdk/worker/pongs';
import { HeartbeatThrottle } from '../../../src/sdk/worker/heartbeats';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** From now on Date.now runs `ms` behind. */
function setClockBack(ms: number): void {
  const real = Date.now.bind(Date);
  jest.spyOn(Date, 'now').mockImplementation(() => real() - ms);
}
afterEach(() => jest.restoreAllMocks());

it('an enqueue times out at its timeout when the clock is set back meanwhile', async () => {
  // A server that accepts connections and never answers: the call can only end by its timeout.
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => void sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const c = new Client({ address: `127.0.0.1:${(server.address() as net.AddressInfo).port}` });
  try {
    const started = performance.now();
    const call = c.enqueueStep({ tenant: 'acme', flowId: 'f', flowType: 'order', stepType: 's', stepExecutionId: 'x' }, { timeoutMs: 500 })
      .then(() => undefined, (e: unknown) => e);
    await sleep(100);
    setClockBack(4000);
    const err = await call;
    expect(err).toBeInstanceOf(ZdDeadlineExceededError);
    expect(performance.now() - started).toBeLessThan(2500); // 4.5 s when it followed the clock
  } finally {
    c.close();
    for (const s of sockets) s.destroy();
    server.close();
  }
});

it('a running task keeps ponging when the clock is set back', async () => {
  const sweep = new PongSweep(100);
  const pongs: number[] = [];
  const task = { pong: (at: number) => void pongs.push(at) };
  sweep.add(task);
  try {
    await sleep(150);
    setClockBack(5000);
    const before = pongs.length;
    await sleep(600);
    expect(pongs.length - before).toBeGreaterThanOrEqual(2); // one every 75 ms; none for 5 s when it followed the clock
  } finally {
    sweep.delete(task);
  }
});

it('a held heartbeat goes at the end of its interval when the clock is set back', async () => {
  const sent: string[] = [];
  const hb = new HeartbeatThrottle(200, (d) => void sent.push(Buffer.from(d).toString()));
  try {
    hb.beat(Buffer.from('1')); // sent at once
    setClockBack(5000);
    hb.beat(Buffer.from('2')); // held for the rest of the interval
    await sleep(600);
    expect(sent).toEqual(['1', '2']);
  } finally {
    hb.stop();
  }
});
