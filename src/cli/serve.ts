import type { Command } from 'commander';
import { createLogger } from '../util/logger';
import {
  CliExit, configOptions, drainAndClose, EXIT_CONFIG, loadConfigOrExit, onShutdownSignals, redisConfigured, startNode, type ConfigCliOptions,
} from './common';

/** Extra time past drain.timeout before a stuck shutdown is forced. */
const FORCE_GRACE_MS = 10_000;

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
      const logger = createLogger(config.log.level);
      const node = await startNode(config, logger);
      // Handlers first: a supervisor may send SIGTERM as soon as it reads the line below.
      onShutdownSignals(logger, (signal) => drainAndClose(node, signal), config.drain.timeout + FORCE_GRACE_MS);
      logger.info({ api: node.apiAddress, http: node.httpAddress, metrics: node.metricsAddress }, 'zdmatch node started');
    });
}
