/**
 * Two nodes behind a real HAProxy running deploy/haproxy/zdmatch.cfg (HTTP/2
 * on the bind and the server lines, /readyz health checks) on loopback.
 * Workers and the producer connect only through HAProxy. A long poll through
 * it runs its whole wait; one node is drained with SIGTERM mid-run, HAProxy
 * marks it down on its /readyz 503, every acknowledged Step gets exactly one
 * COMPLETED outcome, and the workers end up on the node that remains.
 */
import fs from 'node:fs';
import path from 'node:path';
import { drainThroughBalancer, useBalancedRun } from '../helpers/balancer-drain';
import { REPO_ROOT, type NodeProcess } from '../helpers/node-process';
import { useEmbeddedRedis } from '../helpers/redis';
import { requireCommand, runOk } from '../helpers/tools';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();

/**
 * deploy/haproxy/zdmatch.cfg with its listen address and server lines pointed
 * at the test's (server n<i> on each node's API port, checked on its metrics
 * port), logging state changes to stderr.
 */
function haproxyConfig(listenPort: number, nodes: NodeProcess[]): string {
  const shipped = fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'haproxy', 'zdmatch.cfg'), 'utf8');
  const lines = shipped.split('\n');
  const firstServer = lines.findIndex((l) => l.includes('# zdmatch server'));
  expect(firstServer).toBeGreaterThan(0);
  const template = lines[firstServer]!;
  const portOf = (address: string) => address.slice(address.lastIndexOf(':') + 1);
  const servers = nodes.map((n, i) => {
    const line = template.replace(/server \S+ \S+/, `server n${i + 1} ${n.apiAddress}`).replace(/ port \d+/, ` port ${portOf(n.metricsAddress)}`);
    expect(line).toContain(`port ${portOf(n.metricsAddress)}`);
    return line;
  });
  const rewritten = lines
    .flatMap((l, i) => (!l.includes('# zdmatch server') ? [l] : i === firstServer ? servers : []))
    .map((l) => (l.includes('# zdmatch listen') ? l.replace(/bind \S+/, `bind 127.0.0.1:${listenPort}`) : l))
    .map((l) => (l.includes('# zdmatch log') ? l.replace(/log .*#/, 'log stderr format raw local0 notice  #') : l));
  const text = rewritten.join('\n');
  expect(text).toContain(`bind 127.0.0.1:${listenPort}`);
  expect(text).toContain('log stderr');
  return text;
}

const balanced = useBalancedRun(() => redis.url, 'hp');

it('keeps long polls, marks a draining node down on /readyz, and loses nothing as workers move to the other node', async () => {
  const haproxyBin = requireCommand('haproxy', 'haproxy');
  const { nodes: pair, dir: prefix, port } = await balanced.start();
  const cfg = path.join(prefix, 'zdmatch.cfg');
  fs.writeFileSync(cfg, haproxyConfig(port, pair));
  runOk(haproxyBin, ['-c', '-f', cfg]);
  // -db: foreground, no daemon
  const haproxy = balanced.spawn(haproxyBin, ['-db', '-f', cfg, '-p', path.join(prefix, 'haproxy.pid')]);
  const lbLog = haproxy.log;

  await drainThroughBalancer({
    label: 'haproxy', lb: `127.0.0.1:${port}`, nodes: pair, lbLog,
    // A long poll that stays silent for its whole wait is not cut on the way.
    beforeLoad: async (client) => {
      const started = Date.now();
      const got = await client.consumeOutcomes({ group: 'probe', consumer: 'p', maxCount: 10, waitMs: 4000 });
      expect(got).toEqual([]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(3900);
    },
    busyAtDrainMs: 3000,
    whileDraining: async () => {
      await waitFor(() => /Server zdmatch_nodes\/n1 is DOWN, reason: Layer7 wrong status, code: 503/.test(lbLog()), {
        timeoutMs: 10_000, intervalMs: 100, description: 'HAProxy marks n1 down on its /readyz 503',
      }).catch((err: Error) => {
        throw new Error(`${err.message}; HAProxy said:\n${lbLog()}`);
      });
    },
  });
  expect(lbLog()).not.toMatch(/zdmatch_nodes\/n2 is DOWN/);
}, 60_000);
