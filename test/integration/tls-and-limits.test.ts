/**
 * TLS on the API and HTTP listeners with a CA made by openssl in the test,
 * and the bound on in-flight long polls per node (limits.maxLongPolls).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClientError, Status } from 'nice-grpc';
import { Client } from '../../src';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { makeCerts } from '../helpers/certs';
import { fetchClients } from '../helpers/fetch';
import { startTestNode } from '../helpers/node';

const redis = useEmbeddedRedis();

const makeServerCerts = (dir: string) => makeCerts(dir, { cn: '127.0.0.1', san: 'IP:127.0.0.1,DNS:localhost' });

it('serves the API over TLS to a Client that trusts the CA, and HTTPS to curl', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-tls-'));
  const certs = makeServerCerts(dir);
  const t = await startTestNode(redis.url, uniquePrefix('tls'), {
    'tls.enabled': true, 'tls.cert': certs.cert, 'tls.key': certs.key, 'tls.ca': certs.ca,
  });
  try {
    const client = new Client({ address: t.node.apiAddress, tls: { ca: certs.ca } });
    const r = await client.enqueueStep({ tenant: 'acme', flowId: 'f', flowType: 'order', stepType: 's', stepExecutionId: '1' });
    expect(r.created).toBe(true);
    client.close();
    // A plaintext client cannot talk to it.
    const plain = new Client({ address: t.node.apiAddress, defaultTimeoutMs: 2000 });
    await expect(plain.getTask(r.taskId)).rejects.toBeDefined();
    plain.close();
    // The fetch surface answers HTTPS; curl verifies the server against the CA.
    const port = t.node.httpAddress.slice(t.node.httpAddress.lastIndexOf(':') + 1);
    // (async: the node runs in this process, so a blocking spawn would deadlock it)
    const res = await promisify(execFile)('curl', ['-sS', '--cacert', certs.ca, '-X', 'POST', '-H', 'content-type: application/json',
      '-d', '{"workerId":"w","topics":[{"tenant":"acme","flowType":"order","stepType":"s"}],"maxTasks":1,"waitMs":1}',
      `https://127.0.0.1:${port}/v1/external-tasks/fetch-and-lock`], { encoding: 'utf8', timeout: 10000 });
    expect(JSON.parse(res.stdout).tasks).toHaveLength(1);
  } finally {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('answers RESOURCE_EXHAUSTED past limits.maxLongPolls and serves again once a wait ends', async () => {
  const t = await startTestNode(redis.url, uniquePrefix('lp'), { 'limits.maxLongPolls': 1 });
  try {
    const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
    const first = t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 800 });
    await new Promise((res) => setTimeout(res, 100));
    const err = (await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 800 }).catch((e: unknown) => e)) as ClientError;
    expect(err.code).toBe(Status.RESOURCE_EXHAUSTED);
    expect(err.details).toContain('limits.maxLongPolls');
    expect((await first).outcome).toBeFalsy();
    // The slot is free again.
    expect((await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 50 })).outcome).toBeFalsy();
  } finally {
    await t.close();
  }
});

it('counts ConsumeOutcomes and a gRPC FetchAndLock that wait against limits.maxLongPolls, as WaitOutcome', async () => {
  const t = await startTestNode(redis.url, uniquePrefix('lp-kinds'), { 'limits.maxLongPolls': 1 });
  try {
    const { external } = fetchClients(t);
    const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
    const holder = t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 300 }); // takes the only place
    while (t.node.longPolls.count === 0) await new Promise((res) => setTimeout(res, 5));
    const refused = async (call: Promise<unknown>) => {
      const err = (await call.then(() => undefined, (e: unknown) => e)) as ClientError;
      return [Status[err.code], err.details.split(':')[0]];
    };
    const full = ['RESOURCE_EXHAUSTED', 'ZD_TOO_MANY_LONG_POLLS'];
    expect(await refused(t.matching.consumeOutcomes({ group: 'g', consumer: 'c', max_count: 1, wait_ms: 200 }))).toEqual(full);
    expect(await refused(external.fetchAndLock({ worker_id: 'w', topics: [{ tenant: 'acme', flow_type: 'order', step_type: 'none' }], wait_ms: 200 }))).toEqual(full);
    expect((await holder).outcome).toBeFalsy();
  } finally {
    await t.close();
  }
});
