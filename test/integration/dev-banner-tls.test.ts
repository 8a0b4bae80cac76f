/**
 * `zdmatch dev` with TLS on: the fetch URL its banner prints is one a client can use
 * (https, as the node serves it). Needs `npm run build` (npm test does it).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { makeCerts } from '../helpers/certs';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';
import { freePorts } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

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
  const [api, httpPort, internal, metrics] = await freePorts(4);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ZD_')));
  const child = spawn(process.execPath, [CLI_MAIN, 'dev', `--redis.url=${redis.url}`, `--redis.keyPrefix=${uniquePrefix('dev-tls')}`,
    `--api.listen=127.0.0.1:${api}`, `--http.listen=127.0.0.1:${httpPort}`, `--internal.listen=127.0.0.1:${internal}`,
    `--metrics.listen=127.0.0.1:${metrics}`, '--drain.timeout=1s', '--tls.enabled=true', `--tls.cert=${certs.cert}`, `--tls.key=${certs.key}`],
  { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    await waitFor(() => out.includes('Ctrl-C drains and stops.'), { timeoutMs: 30_000, description: 'the dev banner' }).catch((err: Error) => {
      throw new Error(`${err.message}; output:\n${out}`);
    });
    const url = /HTTP fetch\s+(\S+)/.exec(out)?.[1];
    expect(url).toBe(`https://127.0.0.1:${httpPort}`);
    const r = await fetchAndLock(url!, fs.readFileSync(certs.ca));
    expect(r).toEqual({ status: 200, body: '{"tasks":[]}' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
