/**
 * The Redis client factory: a single Redis (url), a Redis Cluster (seed
 * nodes) or a Sentinel-managed primary. Batching is explicit: EnqueueSteps
 * as one script call, and the starts and completions of a turn as one
 * (TaskStore, call-batch.ts).
 */
import fs from 'node:fs';
import { isIP } from 'node:net';
import { checkServerIdentity, type ConnectionOptions, type PeerCertificate } from 'node:tls';
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors';
import { parseNatMap, type NatTarget } from '../config/nat-map';
import type { Logger } from '../util/logger';
import type { RedisCa } from './redis-ca';
import { defineScripts } from './scripts';
import { reviveUnaskedEnd } from './sentinel-revive';
import { resendCallsOfUnreadyClose } from './unready-close';

export type RedisClient = Redis | Cluster;

export interface RedisSettings {
  url: string;
  clusterNodes: string[];
  sentinels: string[];
  /**
   * `announced-host:port=reachable-host:port` pairs (redis.natMap, checked by config/load.ts): the Cluster
   * nodes and the Sentinel-named primary are dialled at the reachable address of the one they announce.
   * The seeds and the Sentinels themselves are dialled as given.
   * @default []
   */
  natMap?: string[];
  sentinelName: string;
  password: string;
  /** The ACL user of `password` (Cluster and Sentinel); empty = the default user. */
  username?: string;
  /** TLS to every Redis and Sentinel connection (a rediss:// url is TLS either way). */
  tls?: boolean;
  /** PEM file of the CAs Redis's certificates are checked against; empty = the system CAs. */
  tlsCa?: string;
}

/** The TLS options of Redis connections, or undefined for plain TCP; `ca` (redis.tlsCa's, followed) over the file read once. */
function tlsOptions(settings: RedisSettings, ca?: RedisCa): ConnectionOptions | undefined {
  if (!settings.tls && !settings.url.startsWith('rediss://')) return undefined;
  if (ca) return ca.options();
  return settings.tlsCa ? { ca: fs.readFileSync(settings.tlsCa) } : {};
}

/**
 * TLS options for a server dialled at the reachable address redis.natMap maps its announced
 * one to. A certificate made for the Redis servers names the host they announce (a Cluster's
 * `cluster-announce-hostname`, an address of their own network), seldom the NodePort, load
 * balancer or proxy the node reaches them at; Node's own check is against the host dialled.
 * Here the name sent (SNI) is the announced hostname, and the certificate must name the
 * announced host, or else the host dialled (a certificate made for that address, the one
 * check there was before).
 */
function natTls(base: () => ConnectionOptions, announcedHost: string, dialled: NatTarget): ConnectionOptions {
  return Object.assign(base(), {
    ...(isIP(announcedHost) ? {} : { servername: announcedHost }),
    checkServerIdentity: (_host: string, cert: PeerCertificate): Error | undefined => {
      const err = checkServerIdentity(announcedHost, cert);
      if (!err || !checkServerIdentity(dialled.host, cert)) return undefined;
      return err;
    },
  });
}

/** The announced host of a natMap key ("host:port", an IPv6 host unbracketed). */
function announcedHostOf(key: string): string {
  return key.slice(0, key.lastIndexOf(':'));
}

/** "host:port" (config/load.ts checks the form), an IPv6 host bracketed: the brackets are not the host's. */
function hostPort(s: string): { host: string; port: number } {
  const i = s.lastIndexOf(':');
  const host = s.slice(0, i);
  return { host: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host, port: Number(s.slice(i + 1)) };
}

/** How often a Redis Cluster client reads the slot map again (see createRedis). */
const SLOTS_REFRESH_MS = 5000;

/**
 * No auto-pipelining. It holds every command until the next tick and sends
 * the tick's commands as one batch, which put the node, Redis and the workers
 * in lockstep: each waited for the others' whole batch. Sent at once, a slot's
 * start and result commands overlap with the rest; the bench measured 13-25 %
 * more Steps/s on one Redis. Batches that are batches by nature (EnqueueSteps)
 * go to Redis as one script call (TaskStore.enqueueMany).
 */
export function createRedis(settings: RedisSettings, extra: RedisOptions = {}, ca?: RedisCa): RedisClient {
  const common: RedisOptions = {
    enableAutoPipelining: false,
    maxRetriesPerRequest: 3,
    connectionName: 'zdmatch',
    ...extra,
  };
  // A primary demoted under an open connection (a switchover by hand, a managed
  // endpoint name that moves) answers every write READONLY for as long as that
  // connection lasts. It is dropped at the first one, so the next command finds the
  // primary anew (through Sentinel, or the name). The command that met it fails
  // (READONLY means it wrote nothing; callers see a retryable error) rather than
  // being resent, which would loop on a Redis that stays a replica. Not for a
  // Cluster: there a failover answers MOVED, and ioredis follows it.
  const single: RedisOptions = { ...common, reconnectOnError: (err) => err.message.startsWith('READONLY') };
  // One object for every connection of the client: ioredis reads it at each connect, and `ca` updates it.
  const tls = tlsOptions(settings, ca);
  const retries = common.maxRetriesPerRequest ?? 3;
  const parsedNat = settings.natMap?.length ? parseNatMap(settings.natMap) : undefined;
  // Each mapped server's own TLS options (natTls), made once: ioredis keeps a connection's options for its reconnects.
  const tlsBase = (): ConnectionOptions => (ca ? ca.options() : { ...tls });
  const mappedTls = new Map<string, ConnectionOptions>();
  if (parsedNat && tls) for (const [key, to] of Object.entries(parsedNat)) mappedTls.set(key, natTls(tlsBase, announcedHostOf(key), to));
  /** The announced key whose reachable address is `host:port`, if one maps there. */
  const announcedAt = (a: { host: string; port: number }): string | undefined =>
    [...mappedTls.keys()].find((k) => parsedNat![k]!.host === a.host && parsedNat![k]!.port === a.port);
  let client: RedisClient;
  if (settings.clusterNodes.length > 0) {
    // A seed at the reachable address of a mapped server is that server: its certificate is checked as the map's.
    const seeds = settings.clusterNodes.map(hostPort).map((seed) => {
      const key = announcedAt(seed);
      return key ? { ...seed, tls: mappedTls.get(key)! } : seed;
    });
    const natMap = parsedNat ? { natMap: Object.fromEntries(Object.entries(parsedNat).map(([key, to]) => [key, mappedTls.has(key) ? { ...to, tls: mappedTls.get(key)! } : to])) } : {};
    client = new Cluster(seeds, {
      enableAutoPipelining: false,
      // A script sent to a slot mid-migration answers TRYAGAIN before it writes (lua/includes/slot-guard.lua):
      // retried every 100 ms for up to ~6 s (ioredis counts these as redirections), long enough for a slot
      // of a few ten thousand keys to move; past that the caller sees the error, and nothing was written.
      retryDelayOnTryAgain: 100,
      maxRedirections: 64,
      // The slot map read again every 5 s (ioredis documents this default but does not set it). It was
      // read only on a MOVED or an error: after a primary that froze (or was black-holed) failed over,
      // nothing errs, and its slots' calls went to it, unanswered, for as long as it stayed frozen.
      // Read again, the map drops it, its connection closes, and the calls held there go again to the
      // promoted replica.
      slotsRefreshInterval: SLOTS_REFRESH_MS,
      redisOptions: { ...common, username: settings.username || undefined, password: settings.password || undefined, ...(tls ? { tls } : {}) },
      // With TLS the nodes are dialled by the names CLUSTER SLOTS gives (a managed
      // service's hostnames), not by addresses looked up first: the certificate names those.
      ...(tls ? { dnsLookup: (address: string, done: (err: null, address: string) => void) => done(null, address) } : {}),
      scaleReads: 'master',
      ...natMap,
      // While no node of the Cluster answers, ioredis holds every call in the Cluster's offline queue
      // and reconnects for ever: calls waited out their callers' deadlines, the queue grew for as long
      // as the outage lasted, and a node could not stop. As on one Redis (maxRetriesPerRequest), the
      // calls held fail once that many reconnects in a row have failed, and later ones at the next
      // failed reconnect; each fails as Redis being unreachable (ZD_STORE_UNAVAILABLE).
      clusterRetryStrategy: (times: number) => {
        if (times > retries) (client as unknown as { flushQueue(err: unknown): void }).flushQueue(new MaxRetriesPerRequestError(retries));
        return Math.min(100 + times * 2, 2000);
      },
    });
  } else if (settings.sentinels.length > 0) {
    client = new Redis({
      ...single,
      sentinels: settings.sentinels.map(hostPort),
      name: settings.sentinelName,
      username: settings.username || undefined,
      password: settings.password || undefined,
      // Sentinels deployed with auth take the data nodes' credentials (a Sentinel that asks for none
      // only warns of an AUTH it did not need): given none, the node never found its primary.
      sentinelUsername: settings.username || undefined,
      sentinelPassword: settings.password || undefined,
      // Drop the connection when a Sentinel announces +switch-master. A primary that froze
      // (or whose network black-holes it) closes nothing: with no command timeout, every call
      // waited on it for good, and the node never went to the primary Sentinel promoted.
      failoverDetector: true,
      // ioredis passes a Sentinel-named primary's mapped entry to tls.connect with the TLS options over it:
      // the entry carries the name to check (natTls), which those options do not set.
      ...(parsedNat ? { natMap: Object.fromEntries(Object.entries(parsedNat).map(([key, to]) => {
        const t = mappedTls.get(key);
        return [key, t ? { ...to, ...(t.servername ? { servername: t.servername } : {}), checkServerIdentity: t.checkServerIdentity } : to];
      })) } : {}),
      ...(tls ? { tls, enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
    });
    reviveUnaskedEnd(client as Redis);
  } else {
    if (!settings.url) throw new Error('redis.url is not set');
    client = new Redis(settings.url, tls ? { ...single, tls } : single);
  }
  if (client instanceof Redis) resendCallsOfUnreadyClose(client);
  defineScripts(client);
  countCloses(client);
  return client;
}

/**
 * A client's errors in the node's log, at most one line per `everyMs` (with how
 * many it left out): with no listener ioredis prints every failed reconnect to
 * stderr as "Unhandled error event", a line per retry while Redis is away.
 */
export function logRedisErrors(client: RedisClient, log: Logger, connection: string, everyMs = 10_000): void {
  let last = -Infinity;
  let leftOut = 0;
  client.on('error', (err: Error) => {
    const now = Date.now();
    if (now - last < everyMs) {
      leftOut++;
      return;
    }
    log.warn({ connection, err: err.message, leftOut }, 'redis connection error');
    last = now;
    leftOut = 0;
  });
}

/**
 * How often each client's connection closed (connectionEpoch). ioredis sends
 * the commands in flight when a connection closes again on the next one
 * (autoResendUnfulfilledCommands), and holds commands sent while it reconnects
 * for the next one (the offline queue): a WAIT can so run on a newer connection
 * than the write's, and there it confirms what that connection's server had
 * (a new primary's own stream, which its replicas have at once), not the write,
 * which went to the old connection's primary (after a Sentinel failover that
 * CLIENT KILLs the old primary's clients and resyncs it: the write is gone).
 */
const closes = new WeakMap<RedisClient, { n: number }>();

function countCloses(client: RedisClient): { n: number } {
  let c = closes.get(client);
  if (!c) {
    const counter = { n: 0 };
    // 'close' is emitted before ioredis starts the next connection (and so before it sends anything there).
    client.on('close', () => counter.n++);
    closes.set(client, counter);
    c = counter;
  }
  return c;
}

/** Ids of a Cluster client's node connections: a connection ioredis replaced is another connection. */
const nodeIds = new WeakMap<object, number>();
let lastNodeId = 0;

function idOf(node: object): number {
  let id = nodeIds.get(node);
  if (id === undefined) nodeIds.set(node, (id = ++lastNodeId));
  return id;
}

/**
 * A mark of the connections that carry writes to `keys`: taken before a write
 * and again after its WAIT, equal only when both went over the same ones. For
 * one Redis (or Sentinel), the client's count of closes. A Cluster client's node
 * connections never reconnect (ioredis gives them no retryStrategy, so a WAIT on
 * one that closed fails), but a slot can move to another primary between the
 * write and the WAIT (a failover, a resharding, a MOVED seen by another call):
 * the WAIT would go to the new owner, which had none of the write. So the mark
 * names each key's primary and the connection to it as well.
 */
export function connectionEpoch(redis: RedisClient, keys: readonly string[] = []): string {
  const closes = String(countCloses(redis).n);
  if (!(redis instanceof Cluster)) return closes;
  const byAddress = new Map(redis.nodes('master').map((n) => [`${n.options.host}:${n.options.port}`, n]));
  const owners = new Set(keys.map((k) => redis.slots[calculateSlot(k)]?.[0] ?? '-'));
  return [closes, ...[...owners].sort().map((a) => {
    const node = byAddress.get(a);
    return `${a}#${node ? idOf(node) : 0}`;
  })].join(' ');
}

/**
 * A Cluster's slot map names no primary for a key, or one the client holds no connection to:
 * mid-failover, for a moment. Not now rather than broken (errors/store-unavailable.ts).
 */
export class NoPrimaryError extends Error {
  override name = 'NoPrimaryError';
}

/**
 * WAIT for `replicas` replicas to have the writes just made to `keys`, at most
 * `timeoutMs`; the fewest any primary involved reached. WAIT counts the writes of
 * the connection it is sent on, and a Cluster client would send it to a random
 * primary: there it goes to each primary that holds one of the keys, on the
 * connection that wrote them. Whether the write and the WAIT went over one
 * connection at all is the caller's to check (connectionEpoch).
 */
export async function waitForReplicas(redis: RedisClient, keys: string[], replicas: number, timeoutMs: number): Promise<number> {
  if (!(redis instanceof Cluster)) return Number(await redis.wait(replicas, timeoutMs).catch(demotedPrimary(keys)));
  const owners = new Set<string>();
  for (const k of keys) {
    const owner = redis.slots[calculateSlot(k)]?.[0];
    if (!owner) throw new NoPrimaryError(`no primary serves the slot of ${k} yet`);
    owners.add(owner);
  }
  const byAddress = new Map(redis.nodes('master').map((n) => [`${n.options.host}:${n.options.port}`, n]));
  const acked = await Promise.all([...owners].map((a) => {
    const node = byAddress.get(a);
    if (!node) throw new NoPrimaryError(`no connection to primary ${a}`);
    return node.wait(replicas, timeoutMs).then(Number, demotedPrimary(keys));
  }));
  return Math.min(...acked);
}

/**
 * A WAIT that reached a primary a failover had just demoted (the slot map or the
 * Sentinel's answer not yet refreshed) is refused by Redis as a replica's: the write
 * may be on the old primary only, so the enqueue is not acknowledged, and its retry is
 * idempotent. It answered ZD_INTERNAL, and the producer did not retry.
 */
function demotedPrimary(keys: string[]): (err: Error) => never {
  return (err) => {
    if (/^ERR WAIT cannot be used with replica/.test(err.message)) {
      throw new NoPrimaryError(`the primary that took the write of ${keys[0] ?? 'the enqueue'} is a replica now (a failover)`);
    }
    throw err;
  };
}

/**
 * Whether a Cluster client became ready within `withinMs`: ioredis readies it once CLUSTER INFO
 * of one of its nodes reports cluster_state:ok, and holds every call until then. Ends early, not
 * ready, at the client's first error (no seed reachable) or its end.
 */
export function clusterReady(client: Cluster, withinMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady).off('error', onFail).off('end', onFail);
      resolve(ready);
    };
    const onReady = () => done(true);
    const onFail = () => done(false);
    const timer = setTimeout(onFail, withinMs);
    client.on('ready', onReady).on('error', onFail).on('end', onFail);
  });
}

/**
 * cluster_state from CLUSTER INFO of the first of `settings.clusterNodes` that answers within
 * `timeoutMs` (a frozen node holds a connection open and answers nothing), with that node's
 * address; undefined when none answers.
 */
export async function clusterState(settings: RedisSettings, timeoutMs = 1000): Promise<{ node: string; state: string } | undefined> {
  const tls = tlsOptions(settings);
  for (const node of settings.clusterNodes) {
    const r = new Redis({
      ...hostPort(node), username: settings.username || undefined, password: settings.password || undefined, ...(tls ? { tls } : {}),
      lazyConnect: true, connectTimeout: timeoutMs, commandTimeout: timeoutMs, maxRetriesPerRequest: 0,
      retryStrategy: () => null, enableOfflineQueue: false, connectionName: 'zdmatch',
    });
    r.on('error', () => undefined);
    try {
      await r.connect();
      const state = /^cluster_state:(\w+)/m.exec(String(await r.cluster('INFO')))?.[1];
      if (state) return { node, state };
    } catch {
      /* the next one */
    } finally {
      r.disconnect();
    }
  }
  return undefined;
}
