/**
 * A Redis client's errors go to the node's log, a line per interval with the
 * count left out, not ioredis's "Unhandled error event" on stderr for every
 * reconnect attempt. A real ioredis client dialling a loopback port where
 * nothing listens (so each retry fails at once).
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { createRedis, logRedisErrors } from '../../../src/store/redis';
import { freePort } from '../../helpers/ports';
import { sleep } from '../../helpers/wait';

it('logs a dead Redis once per interval, with how many errors it left out, and nothing on stderr', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(chunk: Buffer, _e, cb) { lines.push(JSON.parse(chunk.toString())); cb(); } });
  const log = pino({ level: 'warn' }, sink);
  const stderr = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  const port = await freePort();
  const client = createRedis({ url: `redis://127.0.0.1:${port}`, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  try {
    logRedisErrors(client, log, 'main', 600);
    await sleep(1500);
    const errors = lines.filter((l) => l.msg === 'redis connection error');
    // Reconnects fail many times in 1.5 s; the log says so two or three times.
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.length).toBeLessThanOrEqual(3);
    expect(errors[0]).toMatchObject({ connection: 'main', leftOut: 0 });
    expect(String(errors[0]!.err)).toContain(String(port));
    expect(Number(errors[1]!.leftOut)).toBeGreaterThan(0);
    expect(stderr.mock.calls.filter((c) => String(c[0]).includes('Unhandled error event'))).toEqual([]);
  } finally {
    client.disconnect();
    stderr.mockRestore();
  }
});

it('logs the first error after each interval, counting those in between, and not one sooner', () => {
  jest.useFakeTimers({ now: 1_000_000 });
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(chunk: Buffer, _e, cb) { lines.push(JSON.parse(chunk.toString())); cb(); } });
  const log = pino({ level: 'warn' }, sink);
  const client = createRedis({ url: 'redis://127.0.0.1:1', clusterNodes: [], sentinels: [], sentinelName: '', password: '' }, { lazyConnect: true });
  try {
    logRedisErrors(client, log, 'enqueue', 1000);
    const fail = (msg: string) => client.emit('error', new Error(msg));
    fail('e1');
    fail('e2');
    jest.advanceTimersByTime(999);
    fail('e3'); // 999 ms after the last line: left out
    jest.advanceTimersByTime(1);
    fail('e4'); // 1000 ms: logged, with the two left out
    fail('e5');
    jest.advanceTimersByTime(1000);
    fail('e6'); // the count starts again after each line
    const logged = lines.map((l) => [l.connection, l.err, l.leftOut]);
    expect(logged).toEqual([['enqueue', 'e1', 0], ['enqueue', 'e4', 2], ['enqueue', 'e6', 1]]);
  } finally {
    client.disconnect();
    jest.useRealTimers();
  }
});
