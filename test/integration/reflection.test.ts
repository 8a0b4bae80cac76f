/**
 * gRPC server reflection: `buf curl` (a real client that is not ours) lists a
 * node's services and calls one without the .proto files.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode } from '../helpers/node';
import { startAuthNode } from '../helpers/auth-node';

const redis = useEmbeddedRedis();
const BUF = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'buf');
// async: the node runs in this process, so a blocking spawn would deadlock it
const run = (args: string[]) => promisify(execFile)(BUF, args, { encoding: 'utf8', timeout: 20000 });

it('lets buf curl list the services and call one through reflection', async () => {
  const t = await startTestNode(redis.url, uniquePrefix('refl'));
  try {
    const base = `http://${t.node.apiAddress}`;
    const listed = await run(['curl', '--protocol', 'grpc', '--http2-prior-knowledge', '--list-methods', base]);
    expect(listed.stdout).toContain('zdmatch.v1.MatchingService/EnqueueStep');
    expect(listed.stdout).toContain('zdmatch.v1.WorkerTaskService/Connect');
    expect(listed.stdout).not.toContain('PeerService');
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
    const called = await run(['curl', '--protocol', 'grpc', '--http2-prior-knowledge', '-d', '{"tenant":"acme"}',
      `${base}/zdmatch.v1.MatchingService/DescribeQueues`]);
    const body = JSON.parse(called.stdout) as { queues: { flowType?: string; flow_type?: string; ready?: string }[] };
    expect(body.queues).toHaveLength(1);
    expect(body.queues[0]!.flowType ?? body.queues[0]!.flow_type).toBe('order');
  } finally {
    await t.close();
  }
});

it('serves reflection with auth on to a client token, and to no caller without one', async () => {
  const t = await startAuthNode(redis.url, 'refl-auth', { workers: [{ token: 'worker-secret-0123456789', tenants: ['acme'] }], clients: [{ token: 'client-secret-0123456789', tenants: ['acme'] }] });
  try {
    const list = (...header: string[]) => run(['curl', '--protocol', 'grpc', '--http2-prior-knowledge', ...header, '--list-methods', `http://${t.node.apiAddress}`])
      .then((r) => r.stdout, (e: { stderr?: string }) => `failed: ${e.stderr ?? ''}`);
    expect(await list('--reflect-header', 'authorization: Bearer client-secret-0123456789')).toContain('zdmatch.v1.MatchingService/EnqueueStep');
    expect(await list()).toMatch(/^failed: .*not authenticated/is);
    expect(await list('--reflect-header', 'authorization: Bearer worker-secret-0123456789')).toMatch(/^failed: /);
  } finally {
    await t.close();
  }
});
