/**
 * Two nodes behind a real nginx running deploy/nginx/zdmatch.conf (HTTP/2,
 * grpc_pass) on loopback. Workers and the producer connect only through
 * nginx; one node is drained with SIGTERM mid-run. Every acknowledged Step
 * gets exactly one COMPLETED outcome, and the workers end up on the node that
 * remains.
 */
import fs from 'node:fs';
import path from 'node:path';
import { drainThroughBalancer, useBalancedRun } from '../helpers/balancer-drain';
import { REPO_ROOT } from '../helpers/node-process';
import { useEmbeddedRedis } from '../helpers/redis';
import { requireCommand, runOk } from '../helpers/tools';

const redis = useEmbeddedRedis();

/** deploy/nginx/zdmatch.conf with its upstream servers and listen port pointed at the test's. */
function nginxConfig(prefix: string, listenPort: number, upstreams: string[]): string {
  const shipped = fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'nginx', 'zdmatch.conf'), 'utf8');
  const lines = shipped.split('\n');
  const firstUpstream = lines.findIndex((l) => l.includes('# zdmatch upstream'));
  expect(firstUpstream).toBeGreaterThan(0);
  const template = lines[firstUpstream]!;
  const body = lines
    .flatMap((l, i) => {
      if (!l.includes('# zdmatch upstream')) return [l];
      return i === firstUpstream ? upstreams.map((u) => template.replace(/server \S+/, `server ${u}`)) : [];
    })
    .map((l) => (l.includes('# zdmatch listen') ? l.replace(/listen \d+/, `listen 127.0.0.1:${listenPort}`) : l))
    .join('\n');
  fs.writeFileSync(path.join(prefix, 'zdmatch.conf'), body);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${prefix}/${t};`).join('\n');
  return [
    'daemon off;', 'worker_processes 1;', `pid ${prefix}/nginx.pid;`, `error_log ${prefix}/error.log warn;`,
    process.getuid?.() === 0 ? 'user root;' : '',
    'events { worker_connections 4096; }',
    'http {', '  access_log off;', temp, `  include ${prefix}/zdmatch.conf;`, '}', '',
  ].join('\n');
}

const balanced = useBalancedRun(() => redis.url, 'ng');

it('loses nothing when a node behind nginx drains mid-run, and workers move to the other node', async () => {
  const nginxBin = requireCommand('nginx', 'nginx-full');
  const { nodes: pair, dir: prefix, port } = await balanced.start();
  fs.writeFileSync(path.join(prefix, 'nginx.conf'), nginxConfig(prefix, port, pair.map((n) => n.apiAddress)));
  runOk(nginxBin, ['-t', '-p', prefix, '-c', path.join(prefix, 'nginx.conf')]);
  const nginx = balanced.spawn(nginxBin, ['-p', prefix, '-c', path.join(prefix, 'nginx.conf')]);
  await drainThroughBalancer({ label: 'nginx', lb: `127.0.0.1:${port}`, nodes: pair, lbLog: nginx.log });
}, 120_000);
