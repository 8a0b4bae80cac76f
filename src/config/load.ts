import convict from 'convict';
import fs from 'node:fs';
import net from 'node:net';
import YAML from 'yaml';
import { registerFormats } from './formats';
import { parseNatMap } from './nat-map';
import { schema } from './schema';
import { readTlsFiles, tlsFilesProblem } from './tls-files';
import { MAX_TIMER_MS } from '../util/clock';

/** The loaded config; durations are milliseconds. Mirrors schema.ts. */
export interface Config {
  api: { listen: string };
  http: { listen: string };
  internal: { listen: string; advertise: string };
  metrics: { listen: string };
  matching: {
    dispatchWait: number; stickyWait: number; syncMatchWait: number; headsResyncInterval: number;
    maxConcurrentTasksCap: number; maxStreams: number; unsupportedTypeCacheEntries: number;
    maxQueueLength: number; maxFlowTypes: number; maxFlowTypeLength: number; pingInterval: number; busyStreamSilence: number;
  };
  limits: {
    maxPayloadBytes: number; maxBatch: number; maxWait: number; maxLongPolls: number; maxStreamsPerConnection: number;
    httpHeadersTimeout: number; httpRequestTimeout: number; httpMaxHeaders: number; httpKeepAliveTimeout: number;
  };
  redis: {
    url: string; clusterNodes: string[]; sentinels: string[]; natMap: string[]; sentinelName: string; username: string; password: string;
    tls: boolean; tlsCa: string; keyPrefix: string; waitReplicas: number;
  };
  cluster: { partitions: number; nodeId: string; heartbeat: number; nodeTtl: number; leaseTtl: number };
  steps: { maxAttempts: number; initialInterval: number; backoffCoefficient: number; maxInterval: number };
  fetch: {
    lockDuration: number; maxLockDuration: number; wait: number; maxWait: number;
    maxTasks: number; maxMaxTasks: number; maxLockExpiries: number;
  };
  outcomes: { retention: number; redeliverAfter: number };
  auth: { enabled: boolean; workerTokensFile: string; clientTokensFile: string; reloadInterval: number };
  tls: { enabled: boolean; cert: string; key: string; ca: string; peerServerName: string };
  log: { level: string };
  drain: { timeout: number };
}

/** A config that cannot run; `message` is one line naming the key. */
export class ConfigError extends Error {
  constructor(readonly key: string, reason: string) {
    super(`config ${key}: ${reason}`);
    this.name = 'ConfigError';
  }
}

export interface LoadOptions {
  /** A YAML (or JSON) file; its values override defaults. */
  file?: string;
  /** Environment (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Flags such as `--matching.stickyWait=2s`. */
  args?: string[];
  /** Values set by code (tests, `zdmatch dev`); they override everything. */
  overrides?: Record<string, unknown>;
  /** Defaults set by code (`zdmatch dev` turns auth off this way); file, env and flags override them. */
  defaults?: Record<string, unknown>;
}

export function loadConfig(opts: LoadOptions = {}): Config {
  registerFormats();
  let conf;
  const flags = parseFlags(opts.args ?? []);
  checkFlagNames(flags.map(([k]) => k));
  const fromFile = opts.file ? readConfigFile(opts.file) : undefined;
  try {
    // Flags are not convict's: its argument parser reads a value that looks like a number as one,
    // so --redis.password=1e3 would become "1000" and --redis.keyPrefix=2.0 "2", where env keeps them whole.
    conf = convict(schema as never, { env: opts.env ?? process.env, args: [] });
    // convict re-applies env after every load(), so these stay below it.
    if (opts.defaults) conf.load(nest(opts.defaults));
    if (fromFile) conf.load(fromFile);
    // As text, as env is: each key's format reads it the same way from either.
    for (const [k, v] of flags) conf.set(k, v as never);
    for (const [k, v] of Object.entries(opts.overrides ?? {})) conf.set(k, v as never);
    conf.validate({ allowed: 'strict' });
  } catch (err) {
    throw toConfigError(err);
  }
  const config = conf.getProperties() as unknown as Config;
  config.internal.advertise = advertisedAddress(config.internal.advertise);
  checkRelations(config);
  return config;
}

/**
 * internal.advertise as peers dial it: an IPv6 address without brackets
 * (`$(POD_IP):8803` on an IPv6 cluster gives `fd00::1:8803`) gets them, since
 * a dialler reads the last colon's part of a bare IPv6 address as the port's.
 */
function advertisedAddress(value: string): string {
  if (!value) return value;
  const i = value.lastIndexOf(':');
  const host = value.slice(0, i);
  const port = value.slice(i + 1);
  if (i < 0 || !/^\d{1,5}$/.test(port) || Number(port) > 65535 || host === '') {
    throw new ConfigError('internal.advertise', `must be host:port (got ${value})`);
  }
  return net.isIPv6(host) ? `[${host}]:${port}` : value;
}

/** The file's settings; a file that cannot be read or parsed fails naming it (and the line, for YAML). */
function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError('file', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  // A warning (a tag or directive YAML does not know, `password: !vault …`) fails as an error does:
  // YAML.parse would print it to stderr quoting the file's line, which may hold redis.password.
  const doc = YAML.parseDocument(text);
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw new ConfigError('file', `${file}: ${(problem.message.split('\n')[0] ?? '').replace(/:$/, '')}`);
  let parsed: unknown;
  try {
    parsed = doc.toJS();
  } catch (err) {
    throw new ConfigError('file', `${file}: ${((err as Error).message.split('\n')[0] ?? '').replace(/:$/, '')}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError('file', `${file}: must be a mapping of sections (such as matching:), not a ${Array.isArray(parsed) ? 'list' : typeof parsed}`);
  }
  // A section whose keys are all commented out (`fetch:` alone) is empty, not null: loaded as null
  // it replaced the whole section, and the node refused to boot over a key the file never named.
  const sections = parsed as Record<string, unknown>;
  for (const [name, value] of Object.entries(sections)) {
    // `matching.stickyWait: 20s` at the top level, as flags are written: convict's strict
    // check took it as declared, and the value was read from the nested key, never set.
    if (name.includes('.')) {
      const [section, ...rest] = name.split('.');
      throw new ConfigError(name, `${file}: a dotted key is not read in a file; nest it (${section}: with ${rest.join('.')}: under it)`);
    }
    if (value === null) sections[name] = {};
    else if (name in schema && (typeof value !== 'object' || Array.isArray(value))) {
      throw new ConfigError(name, `${file}: must be a mapping of its keys, not a ${Array.isArray(value) ? 'list' : typeof value}`);
    }
  }
  return sections;
}

/** The tls.* files as the listeners will use them (config/tls-files.ts). */
function checkTlsFiles(t: Config['tls'], fail: (key: string, reason: string) => never): void {
  const problem = tlsFilesProblem(t, readTlsFiles(t));
  if (problem) fail(problem.key, problem.reason);
}

/** `{ 'auth.enabled': false }` → `{ auth: { enabled: false } }`. */
function nest(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(flat)) {
    const parts = k.split('.');
    let node = out;
    for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Record<string, unknown>;
    node[parts[parts.length - 1]!] = v;
  }
  return out;
}

/**
 * `--section.key=value` and `--section.key value` as [key, value], the value as written; a flag with no
 * value (the last word, or another flag next) is `true`. Other words are skipped (the CLI refuses them).
 */
function parseFlags(args: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < args.length; i++) {
    const m = /^--([^=]+)(?:=([\s\S]*))?$/.exec(args[i]!);
    if (!m) continue;
    let value = m[2];
    if (value === undefined) {
      const next = args[i + 1];
      if (next !== undefined && !next.startsWith('--')) {
        value = next;
        i++;
      } else {
        value = 'true';
      }
    }
    out.push([m[1]!, value]);
  }
  return out;
}

/** Every flag names a key: a misspelt flag must fail like a misspelt file key. */
function checkFlagNames(keys: string[]): void {
  for (const key of keys) {
    let node: unknown = schema;
    for (const part of key.split('.')) {
      node = node && typeof node === 'object' && !('default' in node) ? (node as Record<string, unknown>)[part] : undefined;
    }
    if (!node || typeof node !== 'object' || !('default' in node)) throw new ConfigError(key, 'is not a known key');
  }
}

function toConfigError(err: unknown): ConfigError {
  const msg = err instanceof Error ? err.message : String(err);
  // convict: "matching.syncMatchWait: must be ...: value was ..." (first line names the key)
  const first = msg.split('\n')[0] ?? msg;
  const m = /^([\w.]+): (.*)$/.exec(first);
  if (m) return new ConfigError(m[1]!, m[2]!);
  const unknown = /configuration param '([^']+)' not declared/.exec(first);
  if (unknown) return new ConfigError(unknown[1]!, 'is not a known key');
  return new ConfigError('file', first);
}

/**
 * Durations the node arms a timer with as they are. Past MAX_TIMER_MS each turns into its opposite:
 * `auth.reloadInterval: 30d` stats the tokens files every millisecond, `matching.headsResyncInterval`
 * resyncs without pause, `limits.maxWait` ends every RPC without its own timeout at once.
 */
const TIMER_KEYS = [
  'matching.dispatchWait', 'matching.stickyWait', 'matching.syncMatchWait', 'matching.headsResyncInterval', 'matching.pingInterval',
  'limits.maxWait', 'limits.httpKeepAliveTimeout', 'cluster.heartbeat', 'cluster.nodeTtl', 'cluster.leaseTtl',
  'fetch.wait', 'fetch.maxWait', 'auth.reloadInterval', 'drain.timeout',
] as const;

/**
 * The most partitions a cluster may have: a Redis Cluster has 16 384 hash slots, so more
 * spread the keys no further while every node loads and scans each one (task and outcome
 * ids name their partition in at most six digits, and a YAML 1e20 hung the boot).
 */
export const PARTITIONS_MAX = 16_384;

/**
 * The largest limits.maxPayloadBytes: a task, a locked task or an outcome goes to its
 * client in one gRPC message with its ids and fields, and clients receive at most 4 MiB
 * in one (gRPC's default, the SDK's): past this a payload the node took could never be
 * read, and a fetched task stayed locked unseen until its lock expiries made it terminal.
 */
export const PAYLOAD_BYTES_MAX = 3.5 * 1024 * 1024;

/** The most a HTTP/2 SETTINGS value holds: past it Node threw on the first connection, and the node died. */
export const STREAMS_PER_CONNECTION_MAX = 2 ** 32 - 1;

/**
 * The largest decline cache: the LRU allocates its index arrays for its whole size at
 * once, so 1e8 entries took 1.8 GB and 52 s before the node started, and 2^32 crashed it.
 */
export const DECLINE_CACHE_MAX = 1_000_000;

/** Checks between keys (convict validates one key at a time). */
function checkRelations(c: Config): void {
  const fail = (key: string, reason: string): never => {
    throw new ConfigError(key, reason);
  };
  if (c.limits.maxPayloadBytes > PAYLOAD_BYTES_MAX) {
    fail('limits.maxPayloadBytes', `${c.limits.maxPayloadBytes} is more than ${PAYLOAD_BYTES_MAX} (3.5 MiB): a client receives at most 4 MiB in one gRPC message, and a task carries its payload with its ids in one`);
  }
  if (c.limits.maxStreamsPerConnection > STREAMS_PER_CONNECTION_MAX) {
    fail('limits.maxStreamsPerConnection', `${c.limits.maxStreamsPerConnection} is more than ${STREAMS_PER_CONNECTION_MAX}, what an HTTP/2 setting holds`);
  }
  if (c.matching.unsupportedTypeCacheEntries > DECLINE_CACHE_MAX) {
    fail('matching.unsupportedTypeCacheEntries', `${c.matching.unsupportedTypeCacheEntries} is more than ${DECLINE_CACHE_MAX}: the cache allocates its whole size at start`);
  }
  if (c.cluster.partitions > PARTITIONS_MAX) {
    fail('cluster.partitions', `${c.cluster.partitions} is more than ${PARTITIONS_MAX}, the hash slots of a Redis Cluster: more partitions spread the keys no further`);
  }
  for (const key of TIMER_KEYS) {
    const [section, name] = key.split('.') as [keyof Config, string];
    const ms = (c[section] as unknown as Record<string, number>)[name]!;
    if (ms > MAX_TIMER_MS) fail(key, `${ms}ms is longer than a timer holds (at most ${MAX_TIMER_MS}ms, about 24.8 days)`);
  }
  // Every key carries its partition's hash tag {p} after the prefix; Redis Cluster hashes the first
  // braces of a key, so a brace in the prefix would put every partition in one slot, on one primary.
  if (/[{}]/.test(c.redis.keyPrefix)) {
    fail('redis.keyPrefix', `"${c.redis.keyPrefix}" must not contain { or }: each partition's keys carry the hash tag {p} after it, and a brace in the prefix would put every partition in one Redis Cluster slot`);
  }
  if (c.matching.syncMatchWait <= 0) fail('matching.syncMatchWait', 'must be greater than 0');
  if (c.matching.stickyWait > c.matching.dispatchWait) {
    fail('matching.stickyWait', `${c.matching.stickyWait}ms must not exceed matching.dispatchWait (${c.matching.dispatchWait}ms)`);
  }
  if (c.matching.dispatchWait <= 0) fail('matching.dispatchWait', 'must be greater than 0');
  if (c.matching.pingInterval <= 0) fail('matching.pingInterval', 'must be greater than 0');
  if (c.cluster.heartbeat <= 0) fail('cluster.heartbeat', 'must be greater than 0');
  if (c.cluster.nodeTtl <= c.cluster.heartbeat) fail('cluster.nodeTtl', 'must be longer than cluster.heartbeat');
  if (c.cluster.leaseTtl < 3) fail('cluster.leaseTtl', 'must be at least 3ms');
  for (const [def, max] of [['lockDuration', 'maxLockDuration'], ['wait', 'maxWait'], ['maxTasks', 'maxMaxTasks']] as const) {
    const d = c.fetch[def];
    const m = c.fetch[max];
    // DESIGN §7: the node refuses to boot when a default is zero (an omitted wait must not silently mean "no long poll").
    if (d <= 0) fail(`fetch.${def}`, 'must be greater than 0');
    if (m <= 0) fail(`fetch.${max}`, 'must be greater than 0');
    if (d > m) fail(`fetch.${def}`, `default ${d} exceeds its ceiling fetch.${max} (${m})`);
  }
  if (c.steps.backoffCoefficient < 1) fail('steps.backoffCoefficient', 'must be at least 1');
  if (c.steps.initialInterval <= 0) fail('steps.initialInterval', 'must be greater than 0');
  if (c.steps.maxInterval < c.steps.initialInterval) {
    fail('steps.maxInterval', `${c.steps.maxInterval}ms must not be under steps.initialInterval (${c.steps.initialInterval}ms)`);
  }
  // An outcome kept for less than a second is gone before a WaitOutcome can read it.
  if (c.outcomes.retention < 1000) fail('outcomes.retention', 'must be at least 1s');
  // 0 would hand every consumer's unacked outcomes to the next one that asks.
  if (c.outcomes.redeliverAfter <= 0) fail('outcomes.redeliverAfter', 'must be greater than 0');
  // 0 would end every RPC without a timeout of its own at once, and refuse every wait a caller asks.
  if (c.limits.maxWait <= 0) fail('limits.maxWait', 'must be greater than 0');
  // auth.enabled with no tokens file is not a config error: the node boots and
  // refuses every call of that kind (fail closed) with an ERROR at startup, so
  // a config that forgot auth never serves anyone by accident (docs/security.md).
  if (c.auth.reloadInterval <= 0) fail('auth.reloadInterval', 'must be greater than 0');
  if (c.limits.httpRequestTimeout <= c.fetch.maxWait) {
    fail('limits.httpRequestTimeout', `${c.limits.httpRequestTimeout}ms must exceed fetch.maxWait (${c.fetch.maxWait}ms): HTTP long polls would be cut`);
  }
  if (c.limits.httpHeadersTimeout <= 0) fail('limits.httpHeadersTimeout', 'must be greater than 0');
  if (c.limits.httpKeepAliveTimeout <= 0) fail('limits.httpKeepAliveTimeout', 'must be greater than 0');
  if (c.limits.httpHeadersTimeout > c.limits.httpRequestTimeout) fail('limits.httpHeadersTimeout', 'must not exceed limits.httpRequestTimeout');
  if (c.tls.enabled && (!c.tls.cert || !c.tls.key)) fail('tls.enabled', 'needs tls.cert and tls.key');
  // As redis.tlsCa without TLS to Redis: a certificate given with TLS off served every listener in plaintext without a
  // word. Not tls.ca: its ZD_TLS_CA is also the CLI's CA, which a shell may export for both.
  for (const k of ['cert', 'key'] as const) {
    if (!c.tls.enabled && c.tls[k]) fail(`tls.${k}`, 'is set, but tls.enabled is off: the listeners would serve plaintext; set tls.enabled, or leave it out');
  }
  if (c.tls.enabled) {
    for (const k of ['cert', 'key', 'ca'] as const) {
      const f = c.tls[k];
      if (!f) continue;
      try {
        fs.accessSync(f, fs.constants.R_OK);
      } catch (err) {
        fail(`tls.${k}`, `cannot read ${f}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
    }
    checkTlsFiles(c.tls, fail);
  }
  // Checked here: ioredis takes "localhost:6379" or "http://…" for something else (a socket path, a
  // default host) and fails later with an error about neither; a seed without its port dialled port NaN.
  if (c.redis.url !== '' && !/^rediss?:\/\/[^/?#\s]*[^/?#\s@:][^/?#\s]*(\/\d*)?(\?.*)?$/.test(c.redis.url)) {
    fail('redis.url', 'must be redis://[user:password@]host[:port][/db] or rediss://…');
  }
  for (const key of ['clusterNodes', 'sentinels'] as const) {
    for (const entry of c.redis[key]) {
      const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):(\d{1,5})$/.exec(entry);
      if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) fail(`redis.${key}`, `${entry} must be host:port`);
    }
  }
  const redisModes = [c.redis.url !== '', c.redis.clusterNodes.length > 0, c.redis.sentinels.length > 0].filter(Boolean).length;
  if (redisModes > 1) fail('redis.url', 'set only one of redis.url, redis.clusterNodes, redis.sentinels');
  if (c.redis.natMap.length > 0) {
    try {
      parseNatMap(c.redis.natMap);
    } catch (err) {
      fail('redis.natMap', (err as Error).message);
    }
    // One Redis is dialled at redis.url as written: nothing announces an address to map.
    if (c.redis.clusterNodes.length === 0 && c.redis.sentinels.length === 0) {
      fail('redis.natMap', 'is set, but maps the addresses a Redis Cluster (redis.clusterNodes) or Sentinel (redis.sentinels) announces, and neither is set');
    }
  }
  if (c.redis.tlsCa) {
    if (!c.redis.tls && !c.redis.url.startsWith('rediss://')) fail('redis.tlsCa', 'is set, but TLS to Redis is off: set redis.tls, or give redis.url as rediss://');
    try {
      fs.accessSync(c.redis.tlsCa, fs.constants.R_OK);
    } catch (err) {
      fail('redis.tlsCa', `cannot read ${c.redis.tlsCa}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
}
