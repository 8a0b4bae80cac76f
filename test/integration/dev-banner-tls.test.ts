/**
 * `zdmatch dev` with TLS on: the fetch URL its banner prints is one a client can use
 * (https, as the node serves it). Needs `npm run build` (npm test does it).
 */
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { makeCerts } from '../helpers/certs';
import { startDev } from '../helpers/dev-process';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();

/** POSTs an empty fetch-and-lock to `url`, trusting `ca`: the status and body. */
function fetchAndLock(url: string, ca: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ workerId: 'w', topics: [{ tenant: 'acme', flowType: 'order', stepType: 's' }], waitMs: 1 });
    const req = https.request(`${url}/v1/external-tasks/fetch-and-lock`, {
      method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.once('error', reject);
    req.end(body);
  });
}

it('prints the fetch surface as an https URL when TLS is on, and that URL answers', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-dev-tls-'));
  const certs = makeCerts(dir, { cn: '127.0.0.1', san: 'IP:127.0.0.1,DNS:localhost' });
  const dev = await startDev([`--redis.url=${redis.url}`, `--redis.keyPrefix=${uniquePrefix('dev-tls')}`,
    '--tls.enabled=true', `--tls.cert=${certs.cert}`, `--tls.key=${certs.key}`]);
  try {
    await dev.banner();
    const url = /HTTP fetch\s+(\S+)/.exec(dev.output())?.[1];
    expect(url).toBe(`https://127.0.0.1:${dev.ports.http}`);
    const r = await fetchAndLock(url!, fs.readFileSync(certs.ca));
    expect(r).toEqual({ status: 200, body: '{"tasks":[]}' });
    dev.child.kill('SIGTERM');
    expect(await dev.exited).toBe(0);
  } finally {
    dev.child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
