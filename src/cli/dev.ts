import type { Command } from 'commander';
import type { Config } from '../config';
import { schema } from '../config/schema';
import { findOnPath, REDIS_NOT_FOUND_MESSAGE, startEmbeddedRedis, type EmbeddedRedis } from '../store/embedded-redis';
import { FORCE_GRACE_MS } from './serve';
import {
  CliExit, configOptions, drainAndClose, EXIT_FAILURE, loadConfigOrExit, onShutdownSignals, redisConfigured, SHUTDOWN_SIGNALS, startNode,
  type ConfigCliOptions,
} from './common';

const LISTEN_KEYS = ['api', 'http', 'internal', 'metrics'] as const;

/**
 * The listeners `dev` binds to loopback, same ports: defaults, below a config file,
 * env and flags, so an address the user set is kept, 0.0.0.0 (a dev node in a
 * container) too. Read as "left at the schema default", an explicit
 * --api.listen=0.0.0.0:8801 was moved to 127.0.0.1.
 */
export function devListenDefaults(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of LISTEN_KEYS) out[`${key}.listen`] = schema[key].listen.default.replace(/^0\.0\.0\.0:/, '127.0.0.1:');
  return out;
}

/** `zdmatch dev`: one node on 127.0.0.1, with a private redis-server when no Redis is configured. */
export function registerDev(program: Command): void {
  program
    .command('dev')
    .description('run a single local node; starts a private redis-server when no Redis is configured')
    .option('-c, --config <file>', 'YAML config file')
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (opts: ConfigCliOptions, cmd: Command) => {
      // dev turns auth off as a default: a config file, env or flag that sets auth.enabled wins (docs/security.md).
      const base = { ...configOptions(opts, cmd.args), defaults: { 'auth.enabled': false, ...devListenDefaults() } };
      const probe = loadConfigOrExit(base);
      const overrides: Record<string, unknown> = {};

      let redis: EmbeddedRedis | undefined;
      const stopRedis = async () => {
        if (redis) await redis.stop();
      };
      // Until the node runs (and its own handlers take over), a signal must
      // not orphan the private redis-server: stop it, or (while it is still
      // starting) let the exit hook of embedded-redis kill it.
      const early = () => void stopRedis().finally(() => process.exit(EXIT_FAILURE));
      for (const signal of SHUTDOWN_SIGNALS) process.once(signal, early);

      if (!redisConfigured(probe)) {
        if (!findOnPath('redis-server')) throw new CliExit(REDIS_NOT_FOUND_MESSAGE, EXIT_FAILURE);
        redis = await startEmbeddedRedis();
        overrides['redis.url'] = redis.url;
      }

      let config: Config;
      try {
        config = loadConfigOrExit({ ...base, overrides });
      } catch (err) {
        await stopRedis();
        throw err;
      }
      const { createLogger } = await import('../util/logger');
      const logger = createLogger(config.log.level);
      let node;
      try {
        node = await startNode(config, logger);
      } catch (err) {
        await stopRedis();
        throw err;
      }
      const started = node;
      // The node's handlers go on before `early` comes off and before the banner: with no
      // listener left between them, Node gave the signals back their default action, and a
      // SIGTERM sent on seeing the banner killed the node undrained.
      onShutdownSignals(
        logger,
        async (signal) => {
          try {
            await drainAndClose(started, signal);
          } finally {
            await stopRedis();
          }
        },
        config.drain.timeout + FORCE_GRACE_MS,
      );
      for (const signal of SHUTDOWN_SIGNALS) process.off(signal, early);
      process.stdout.write(banner(started, redis, config));
    });
}

function banner(
  node: { apiAddress: string; httpAddress: string; metricsAddress: string },
  redis: EmbeddedRedis | undefined,
  config: Config,
): string {
  const redisLine = redis
    ? `${redis.url}  (private redis-server, data in ${redis.dataDir}, removed on exit)`
    : config.redis.url || config.redis.clusterNodes.join(',') || `sentinels ${config.redis.sentinels.join(',')}`;
  return [
    '',
    'zdmatch dev: a single local node',
    `  gRPC API      ${node.apiAddress}   (workers, producers, engines)`,
    // Served over TLS with tls.enabled: an http:// URL would get no answer.
    `  HTTP fetch    ${node.httpAddress ? `${config.tls.enabled ? 'https' : 'http'}://${node.httpAddress}` : '(not served)'}`,
    `  metrics       ${node.metricsAddress ? `http://${node.metricsAddress}/metrics` : '(not served)'}`,
    `  redis         ${redisLine}`,
    `  auth          ${config.auth.enabled ? 'on (bearer tokens)' : 'OFF: any caller may act for any tenant (dev only; see docs/security.md)'}`,
    '',
    'Quick start: run a Worker against the API address (see README.md, "Quick start"), then enqueue a Step:',
    `  npx zdmatch enqueue --address ${node.apiAddress} --tenant acme --flow-id f1 --flow-type order --step-type charge --input '{"amount":5}'`,
    `  npx zdmatch queues --address ${node.apiAddress} --tenant acme`,
    'Ctrl-C drains and stops.',
    '',
  ].join('\n');
}
