/**
 * redis.tlsCa kept current with the disk (store/redis-ca.ts): a good bundle
 * read again reaches the tls options already handed to Redis clients; one that
 * does not check out is never used, and is named in an ERROR only once it has
 * stayed bad for REDIS_CA_SETTLE_MS (a writer may not be done with it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REDIS_CA_SETTLE_MS, RedisCa } from '../../../src/store/redis-ca';
import { makeCerts } from '../../helpers/certs';
import { captureLogs } from '../../helpers/logs';
import { waitFor } from '../../helpers/wait';

let dir: string;
let first: Buffer;
let second: Buffer;
let file: string;
const cas: RedisCa[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-redis-ca-'));
  const sub = (n: string) => {
    fs.mkdirSync(path.join(dir, n));
    return path.join(dir, n);
  };
  first = fs.readFileSync(makeCerts(sub('one'), { cn: 'redis', san: 'IP:127.0.0.1' }).ca);
  second = fs.readFileSync(makeCerts(sub('two'), { cn: 'redis', san: 'IP:127.0.0.1' }).ca);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  file = path.join(dir, `ca-${cas.length}.pem`);
  fs.writeFileSync(file, first);
});
afterEach(() => {
  for (const ca of cas.splice(0)) ca.stop();
});

/** A RedisCa on `file` that only rereads it when told (no watch started). */
function redisCa() {
  const { logger, lines } = captureLogs<{ level: number; msg: string; file?: string }>();
  const ca = new RedisCa(file, logger, 3_600_000);
  cas.push(ca);
  return { ca, lines };
}

it('sets a new bundle on every tls options object it handed out, and logs it once', () => {
  const { ca, lines } = redisCa();
  const [a, b] = [ca.options(), ca.options()];
  expect(a.ca).toEqual(first);
  fs.writeFileSync(file, second);
  ca.reload();
  expect([a.ca, b.ca, ca.options().ca]).toEqual([second, second, second]);
  // read again unchanged: nothing to say
  ca.reload();
  expect(lines.map((l) => l.msg)).toEqual(['redis.tlsCa reloaded; new connections to Redis check against it']);
});

it('keeps the bundle in use while the file does not check out, and names it in an ERROR once it stays so', async () => {
  const { ca, lines } = redisCa();
  const o = ca.options();
  fs.writeFileSync(file, 'not a certificate\n');
  const t0 = Date.now();
  ca.reload();
  expect(o.ca).toEqual(first);
  expect(lines).toEqual([]);
  // within seconds of the settle time, not at some later read
  await waitFor(() => lines.length > 0, { description: 'the ERROR', timeoutMs: REDIS_CA_SETTLE_MS + 4000 });
  expect(Date.now() - t0).toBeGreaterThanOrEqual(REDIS_CA_SETTLE_MS - 100);
  expect(lines).toEqual([expect.objectContaining({ level: 50, file })]);
  expect(o.ca).toEqual(first);
});

it('takes a bundle finished within the settle time without an ERROR', async () => {
  const { ca, lines } = redisCa();
  const o = ca.options();
  fs.writeFileSync(file, first.subarray(0, 100));
  ca.reload();
  const g = ca.generation;
  await waitFor(() => ca.generation > g, { description: 'a second read', timeoutMs: 10_000 });
  fs.writeFileSync(file, second);
  await waitFor(() => (o.ca as Buffer).equals(second), { description: 'the finished bundle', timeoutMs: 10_000 });
  expect(lines.map((l) => l.level)).toEqual([30]);
});
