/**
 * Real Redis for integration tests: one embedded redis-server per test file,
 * and a unique key prefix per test so tests never see each other's keys.
 *
 *   const redis = useEmbeddedRedis();          // at the top of a file
 *   it('...', async () => {
 *     const prefix = uniquePrefix();
 *     ... redis.url ...
 *   });
 */
import { randomBytes } from 'node:crypto';
import {
  sendCommand, startEmbeddedRedis, type EmbeddedRedis, type EmbeddedRedisOptions, type RespValue,
} from '../../src/store/embedded-redis';

export interface TestRedis {
  /** The running server (after beforeAll). */
  readonly server: EmbeddedRedis;
  readonly url: string;
  readonly port: number;
  /** One command over a raw socket (no client library needed). */
  command(...args: (string | number)[]): Promise<RespValue>;
  /** SCRIPT FLUSH: exercise the EVALSHA → NOSCRIPT fallback. */
  flushScripts(): Promise<void>;
}

/** Starts a redis-server in beforeAll and stops it in afterAll. */
export function useEmbeddedRedis(opts: EmbeddedRedisOptions = {}): TestRedis {
  let server: EmbeddedRedis | undefined;
  beforeAll(async () => {
    server = await startEmbeddedRedis(opts);
  });
  afterAll(async () => {
    await server?.stop();
  });
  const get = (): EmbeddedRedis => {
    if (!server) throw new Error('useEmbeddedRedis: the server starts in beforeAll; use it inside a test');
    return server;
  };
  return {
    get server() {
      return get();
    },
    get url() {
      return get().url;
    },
    get port() {
      return get().port;
    },
    command: (...args) => sendCommand(get().port, args),
    async flushScripts() {
      await sendCommand(get().port, ['SCRIPT', 'FLUSH']);
    },
  };
}

let counter = 0;

/**
 * A key prefix no other test (in this run, or a concurrent one) uses, for
 * `redis.keyPrefix`: letters, digits and dashes only, so it needs no quoting
 * and never contains a hash tag.
 */
export function uniquePrefix(label = 't'): string {
  counter += 1;
  const worker = process.env.JEST_WORKER_ID ?? '0';
  return `${label.replace(/[^A-Za-z0-9-]/g, '')}-${worker}-${counter}-${randomBytes(3).toString('hex')}`;
}

export { startEmbeddedRedis, sendCommand };
