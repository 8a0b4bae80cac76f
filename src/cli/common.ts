/**
 * Pieces shared by the commands: config loading with one-line errors, exit
 * codes, signal handling, starting a node.
 */
import { InvalidArgumentError } from 'commander';
import type { Config, LoadOptions } from '../config';
import type { Logger } from '../util/logger';
import { MAX_TIMER_MS } from '../util/clock';

/**
 * A count given on the command line: decimal digits only. Number() would read ''
 * (an unset shell variable) as 0, and take ' 3', '1e2' or '0x10'.
 */
export function wholeNumber(flag: string, value: string | undefined, min: number, max: number): number {
  const n = value !== undefined && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new CliExit(`${flag}: must be a whole number from ${min} to ${max} (got ${JSON.stringify(value ?? '')})`, EXIT_CONFIG);
  }
  return n;
}

/**
 * A value parser for names and ids: an empty one (`--tenant ''`, an unset shell
 * variable) is a usage error naming the flag, exit 2, rather than a call the node
 * refuses naming its own field (`steps[0].tenant`), or one it takes as no value
 * at all: an empty filter lists everything, and `outcome-groups drop --tenant ''`
 * would drop the group over every tenant.
 */
export function nonEmpty(value: string): string {
  if (value === '') throw new InvalidArgumentError('must not be empty');
  return value;
}

/** Exit codes: 0 ok, 1 runtime failure, 2 bad config or usage. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_CONFIG = 2;

/** Raised by commands to end with a message on stderr and an exit code. */
export class CliExit extends Error {
  constructor(message: string, readonly code: number) {
    super(message);
    this.name = 'CliExit';
  }
}

export interface ConfigCliOptions {
  config?: string;
}

/** `--config` plus the pass-through `--section.key=value` flags → LoadOptions. */
export function configOptions(opts: ConfigCliOptions, flags: readonly string[], env = process.env): LoadOptions {
  checkConfigFlags(flags);
  return { file: opts.config, env, args: [...flags] };
}

/**
 * The config loader drops any word that is neither a `--section.key` flag nor
 * its value: `serve config.yaml` (no --config) or `-matching.stickyWait=2s`
 * would start a node on the defaults, so they are refused.
 */
function checkConfigFlags(flags: readonly string[]): void {
  const isFlag = (a: string | undefined) => a !== undefined && /^--[^-=]/.test(a);
  flags.forEach((a, i) => {
    const prev = flags[i - 1];
    if (isFlag(a) || (isFlag(prev) && !prev!.includes('='))) return;
    throw new CliExit(`unexpected argument ${JSON.stringify(a)}: config keys are flags (--section.key=value); a config file is --config <file>`, EXIT_CONFIG);
  });
}

/** loadConfig, with a ConfigError turned into a one-line CliExit (exit 2). */
export function loadConfigOrExit(opts: LoadOptions): Config {
  // Loaded by the node commands only: the client commands need no config schema, convict or YAML.
  const { loadConfig, ConfigError } = require('../config/load') as typeof import('../config/load');
  try {
    return loadConfig(opts);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliExit(err.message, EXIT_CONFIG);
    throw err;
  }
}

/** Whether any of the three ways to reach Redis is set. */
export function redisConfigured(c: Config): boolean {
  return c.redis.url !== '' || c.redis.clusterNodes.length > 0 || c.redis.sentinels.length > 0;
}

/** What the CLI needs of a running node (src/node/node.ts `ZdNode`). */
export interface ZdNodeLike {
  readonly apiAddress: string;
  readonly httpAddress: string;
  readonly metricsAddress: string;
  drain(reason?: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts a node. Imported lazily so the client commands do not load the server. */
export async function startNode(config: Config, logger: Logger): Promise<ZdNodeLike> {
  const { ZdNode } = await import('../node/node');
  return ZdNode.start(config, { logger });
}

/**
 * The signals that stop a node. SIGHUP (its terminal closed) is one of them:
 * its default action kills the process without a drain, and `dev`'s private
 * redis-server, which ignores SIGHUP, would outlive it.
 */
export const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/**
 * The first of SHUTDOWN_SIGNALS runs `shutdown` and exits 0 (1 if it throws);
 * a second signal, or `forceAfterMs` passing, exits 1 at once.
 */
export function onShutdownSignals(logger: Logger, shutdown: (signal: NodeJS.Signals) => Promise<void>, forceAfterMs: number): void {
  let received = false;
  const handler = (signal: NodeJS.Signals) => {
    if (received) {
      logger.warn({ signal }, 'second signal: forcing exit');
      process.exit(EXIT_FAILURE);
    }
    received = true;
    logger.info({ signal }, 'shutting down: draining');
    // drain.timeout is at most what a timer holds; the grace added to it must not push it past
    // (a longer delay fires after 1 ms: the node exited at once without draining).
    setTimeout(() => {
      logger.error({ forceAfterMs }, 'shutdown deadline passed: forcing exit');
      process.exit(EXIT_FAILURE);
    }, Math.min(forceAfterMs, MAX_TIMER_MS)).unref();
    shutdown(signal).then(
      () => process.exit(EXIT_OK),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(EXIT_FAILURE);
      },
    );
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, handler);
}

/** drain() then close(); close runs even when drain fails. */
export async function drainAndClose(node: ZdNodeLike, reason: string): Promise<void> {
  try {
    await node.drain(reason);
  } finally {
    await node.close();
  }
}
