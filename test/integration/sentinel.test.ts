/**
 * A node finds its Redis through Sentinel (redis.sentinels, redis.sentinelName)
 * and serves Steps end to end: a real redis-server in sentinel mode watching
 * the test's redis-server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pb } from '../../src/wire';
import { sendCommand } from '../../src/store/embedded-redis';
import { freePort } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let sentinel: ChildProcess | undefined;
let dir = '';
afterAll(() => {
  sentinel?.kill('SIGKILL');
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

it('serves Steps through a Redis found by Sentinel', async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-sentinel-'));
  const port = await freePort();
  const conf = path.join(dir, 'sentinel.conf');
  fs.writeFileSync(conf, [
    `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
    `sentinel monitor mymaster 127.0.0.1 ${redis.port} 1`,
    'sentinel down-after-milliseconds mymaster 5000',
  ].join('\n'));
  sentinel = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  await waitFor(async () => {
    const r = await sendCommand(port, ['SENTINEL', 'get-master-addr-by-name', 'mymaster']).catch(() => null);
    return Array.isArray(r) && Number(r[1]) === redis.port;
  }, { timeoutMs: 15000, intervalMs: 100 });

  const t = await startTestNode('', uniquePrefix('sen'), { 'redis.sentinels': [`127.0.0.1:${port}`], 'redis.sentinelName': 'mymaster' });
  try {
    const s = openSlot(t.worker, registerFrame());
    await s.nextOf('registered');
    const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('via sentinel') } });
    await s.nextOf('result_ack');
    const o = (await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome!;
    expect(o.status).toBe(pb.OutcomeStatus.COMPLETED);
    expect(Buffer.from(o.output!).toString()).toBe('via sentinel');
    s.reset();
  } finally {
    await t.close();
  }
});
