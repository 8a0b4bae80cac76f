/**
 * Sentinels that require a password, as a Redis behind Sentinel with auth is
 * commonly deployed (the Sentinels take the data nodes' password): the node
 * gives its redis.password (and redis.username) to the Sentinels as well as to
 * the primary they name, and still finds Sentinels that ask for none. It gave
 * the Sentinels no password at all, and never connected.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { pb } from '../../src/wire';
import { freePort } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode } from '../helpers/node';
import { waitFor } from '../helpers/wait';

const PASSWORD = 's3cret';
const redis = useEmbeddedRedis();
const sentinels: ChildProcess[] = [];
const dirs: string[] = [];
beforeAll(async () => {
  await redis.command('CONFIG', 'SET', 'requirepass', PASSWORD);
});
afterAll(() => {
  // (the server itself is stopped by its helper, with SIGTERM: no password needed)
  for (const s of sentinels) s.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function startSentinel(requirepass: boolean): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-sentinel-auth-'));
  dirs.push(dir);
  const port = await freePort();
  const conf = path.join(dir, 'sentinel.conf');
  fs.writeFileSync(conf, [
    `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
    `sentinel monitor mymaster 127.0.0.1 ${redis.port} 1`,
    `sentinel auth-pass mymaster ${PASSWORD}`,
    'sentinel down-after-milliseconds mymaster 5000',
    ...(requirepass ? [`requirepass ${PASSWORD}`] : []),
  ].join('\n'));
  sentinels.push(spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' }));
  const c = new Redis({ port, password: requirepass ? PASSWORD : undefined, lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: 1 });
  try {
    await waitFor(async () => {
      const r = (await c.call('SENTINEL', 'get-master-addr-by-name', 'mymaster').catch(() => null)) as string[] | null;
      return Array.isArray(r) && Number(r[1]) === redis.port;
    }, { timeoutMs: 15000, intervalMs: 100, description: 'the Sentinel knows the primary' });
  } finally {
    c.disconnect();
  }
  return port;
}

it.each([
  ['that require the password', true],
  ['that require none', false],
])('serves Steps through Sentinels %s, with redis.password', async (_label, requirepass) => {
  const port = await startSentinel(requirepass);
  const t = await startTestNode('', uniquePrefix('sen-auth'), {
    'redis.sentinels': [`127.0.0.1:${port}`], 'redis.sentinelName': 'mymaster', 'redis.password': PASSWORD,
  });
  try {
    const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
    expect(r.created).toBe(true);
    await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f' });
    expect((await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome?.status).toBe(pb.OutcomeStatus.CANCELLED);
  } finally {
    await t.close();
  }
}, 30_000);
