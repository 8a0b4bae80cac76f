import type { Command } from 'commander';
import type { Config } from '../config';
import type { Logger } from '../util/logger';
import {
  CliExit, configOptions, drainAndClose, EXIT_CONFIG, loadConfigOrExit, onShutdownSignals, redisConfigured, startNode, type ConfigCliOptions,
  type ZdNodeLike,
} from './common';

/** Extra time past drain.timeout before a stuck shutdown is forced (the Helm chart's grace period counts on it). */
export const FORCE_GRACE_MS = 10_000;

/**
 * serve's signal handling: a shutdown signal drains and closes the node once it has
 * started, and a drain (or close) still running drain.timeout + FORCE_GRACE_MS after
 * the signal is cut short with exit 1.
 */
export function onServeShutdown(config: Config, logger: Logger, starting: Promise<ZdNodeLike>): void {
  onShutdownSignals(logger, async (signal) => drainAndClose(await starting, signal), config.drain.timeout + FORCE_GRACE_MS);
}

/** `zdmatch serve [--config file] [--section.key=value ...]`: one production node. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run a node (config from --config YAML, ZD_* env and --section.key=value flags)')
    .option('-c, --config <file>', 'YAML config file')
    .allowUnknownOption()
    .allowExcessArguments()
    .addHelpText('after', '\nAny config key is a flag too, e.g. --matching.stickyWait=2s --redis.url=redis://10.0.0.5:6379')
    .action(async (opts: ConfigCliOptions, cmd: Command) => {
      const config = loadConfigOrExit(configOptions(opts, cmd.args));
      // A config error as the others are (exit 2, the keys named), not "redis.url is not set" from the start (exit 1).
      if (!redisConfigured(config)) {
        throw new CliExit('config redis.url: no Redis is configured: set redis.url, redis.clusterNodes or redis.sentinels (zdmatch dev starts a private redis-server)', EXIT_CONFIG);
      }
      const { createLogger } = await import('../util/logger');
      const logger = createLogger(config.log.level);
      // Handlers before the start: a pod stopped while its node joins (a rollout superseded, a
      // scale-down) died of SIGTERM's default action with the leases it had just taken, and its
      // partitions stayed unserved for leaseTtl. A signal then drains the node once it has started
      // (a start that fails exits 1 with its error).
      const starting = startNode(config, logger);
      onServeShutdown(config, logger, starting);
      const node = await starting;
      logger.info({ api: node.apiAddress, http: node.httpAddress, metrics: node.metricsAddress }, 'zdmatch node started');
    });
}
