/**
 * What the single-purpose benchmarks share: the build they run (`--dist DIR`
 * for an A/B against another one), a node of that build in this process on a
 * private redis-server, and Redis's own counters (INFO commandstats and cpu).
 */
'use strict';
const path = require('node:path');

/** Takes `--dist DIR` out of `argv`; returns a require() of that build's modules (default: this checkout's dist/). */
function buildOf(argv) {
  const i = argv.indexOf('--dist');
  const dir = path.resolve(i < 0 ? path.join(__dirname, '..', '..', 'dist') : argv.splice(i, 2)[1]);
  return (module) => require(path.join(dir, module));
}

/** A node of `dist` with its default config (64 partitions, auth off) on a redis-server of its own. */
async function startBenchNode(dist) {
  const redis = await dist('store/embedded-redis').startEmbeddedRedis();
  const config = dist('config').loadConfig({
    env: {},
    overrides: {
      'redis.url': redis.url, 'api.listen': '127.0.0.1:0', 'http.listen': '127.0.0.1:0', 'metrics.listen': '127.0.0.1:0',
      'internal.listen': '127.0.0.1:0', 'auth.enabled': false,
    },
  });
  const node = await dist('node/node').ZdNode.start(config, { logger: dist('util/logger').createLogger('silent') });
  return {
    node,
    async stop() {
      await node.close();
      await redis.stop();
    },
  };
}

/** Calls of every command (`by`, and `all` summed; commands a script runs count too) and Redis's CPU seconds. */
async function redisCounters(client) {
  const text = (await client.info('commandstats')) + (await client.info('cpu'));
  const m = { cpu: 0, all: 0, by: {} };
  for (const line of text.split('\r\n')) {
    const c = /^cmdstat_([\w|]+):calls=(\d+)/.exec(line);
    if (c) {
      m.by[c[1]] = Number(c[2]);
      m.all += Number(c[2]);
    }
    const u = /^used_cpu_(user|sys):([\d.]+)/.exec(line);
    if (u) m.cpu += Number(u[2]);
  }
  return m;
}

module.exports = { buildOf, startBenchNode, redisCounters };
