/**
 * `zdmatch bench` checks what it is given before it starts anything: counts are
 * whole decimal numbers (Number() read '' as 0 and took '0x10' or '1e3'), an
 * --address is host:port and answers (a wrong one failed only after 30 s as
 * "worker 0 was not ready"), and flags the run would not use are refused, not
 * ignored (a --rate on a throughput run measured something else than meant).
 */
import { freePorts } from '../helpers/ports';
import { runCliAsync } from '../helpers/cli';

const bench = async (args: string[]) => {
  const started = Date.now();
  const r = await runCliAsync(['bench', '--no-progress', ...args]);
  return { ...r, ms: Date.now() - started };
};

it.each([
  [['--tasks', ''], /--tasks: must be a whole number from 1 to 100000000 \(got ""\)/],
  [['--tasks', '0x10'], /--tasks: must be a whole number/],
  [['--warmup', '1e3'], /--warmup: must be a whole number/],
  [['--workers', ' 2'], /--workers: must be a whole number/],
  [['--concurrency', '-1'], /--concurrency: must be a whole number/],
  [['--address', 'x'], /--address: must be host:port/],
  [['--address', '127.0.0.1:99999'], /--address: must be host:port/],
  [['--metrics-address', 'http://x:1/metrics'], /--metrics-address: must be host:port/],
  [['--rate', '100'], /--rate: a throughput run enqueues --tasks/],
  [['--mode', 'rate', '--rate', '100', '--tasks', '5'], /--tasks: a rate run offers --rate/],
  [['--duration', '5'], /--duration: a throughput run ends after --tasks/],
  [['--local', '--address', '127.0.0.1:8801'], /--address: --local starts its own node/],
  [['--local', '--redis-url', 'redis://127.0.0.1:6379'], /--redis-url: --local starts its own node/],
  [['--mode', 'fast'], /^--mode: must be throughput, rate or latency, got fast\n/],
  [['--system', 'kafka'], /^--system: must be zdmatch or bullmq, got kafka\n/],
  [['--mode', 'rate'], /^--mode rate needs --rate <perSec>\n/],
  [['--nodes', '2'], /^--nodes needs --local/],
  [['--redis-cluster'], /^--redis-cluster needs --local\n/],
  [['--system', 'bullmq'], /^--system bullmq needs --redis-url\n/],
  [['--local', '--system', 'bullmq'], /^--local runs zdmatch only/],
  [['--system', 'bullmq', '--redis-url', 'redis://127.0.0.1:1', '--nodes', '2'], /^--nodes: --system bullmq runs against one Redis/],
  [['--system', 'bullmq', '--redis-url', 'redis://127.0.0.1:1', '--redis-cluster'], /^--redis-cluster: --system bullmq runs against --redis-url only\n/],
])('refuses %j at once, naming the flag (exit 2)', async (args, message) => {
  const r = await bench(args);
  expect(r.stderr).toMatch(message);
  expect(r.status).toBe(2);
  expect(r.stdout).toBe('');
}, 20_000);

it('fails within seconds, naming the address, when no node answers there (exit 1)', async () => {
  const [port] = await freePorts(1);
  const r = await bench(['--address', `127.0.0.1:${port}`, '--tasks', '10']);
  expect(r.stderr).toMatch(new RegExp(`--address: no zdmatch node answers at 127\\.0\\.0\\.1:${port}`));
  expect(r.stderr).not.toMatch(/was not ready/);
  expect(r.status).toBe(1);
  expect(r.ms).toBeLessThan(15_000);
}, 40_000);
