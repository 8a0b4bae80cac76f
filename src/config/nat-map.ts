/**
 * redis.natMap: `announced-host:port=reachable-host:port` pairs, for a Redis
 * Cluster or a Sentinel whose servers announce addresses the node cannot dial
 * (a Cluster in containers behind NAT, a Sentinel naming internal addresses).
 * ioredis looks each announced address up as "host:port", an IPv6 host without
 * brackets (how CLUSTER SLOTS, MOVED and Sentinel name it), and dials what it maps to.
 */

/** An address ioredis dials. */
export interface NatTarget {
  host: string;
  port: number;
}

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]=]+):(\d{1,5})$/;

/** "host:port" (IPv6 bracketed) as host and port; undefined when malformed or the port is out of 1-65535. */
function address(text: string): NatTarget | undefined {
  const m = HOST_PORT.exec(text);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  const host = m[1]!;
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port };
}

/**
 * The entries as ioredis's natMap, keyed by the announced "host:port".
 * Throws an Error whose message names the entry at fault (the caller names the key).
 */
export function parseNatMap(entries: readonly string[]): Record<string, NatTarget> {
  const map: Record<string, NatTarget> = {};
  for (const entry of entries) {
    const parts = entry.split('=');
    if (parts.length !== 2) throw new Error(`${entry} must be announced-host:port=reachable-host:port`);
    const [announcedText, reachableText] = parts.map((p) => p.trim()) as [string, string];
    const announced = address(announcedText);
    if (!announced) throw new Error(`${entry}: the announced address ${announcedText || '(empty)'} must be host:port`);
    const reachable = address(reachableText);
    if (!reachable) throw new Error(`${entry}: the reachable address ${reachableText || '(empty)'} must be host:port`);
    const key = `${announced.host}:${announced.port}`;
    // Two targets for one announced address: ioredis would take one of them without a word.
    if (Object.prototype.hasOwnProperty.call(map, key)) throw new Error(`${announcedText} is mapped twice`);
    map[key] = reachable;
  }
  return map;
}
