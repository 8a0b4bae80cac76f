import fs from 'node:fs';
import { findFreePort, isPortFree } from '../../src/store/embedded-redis';

/** The low end of the kernel's ephemeral port range (outgoing connections' local ports). */
function ephemeralLow(): number {
  try {
    return Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

/**
 * A port free on 127.0.0.1 a moment ago, below the ephemeral range when there
 * is room: a test that kills a node and restarts it on the same port must not
 * find the port taken meanwhile as some outgoing connection's local port
 * (bind port 0 hands out ports from that very range).
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  const low = Math.max(10000, high - 12000);
  for (let i = 0; high > low && i < 100; i++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await isPortFree(port, '127.0.0.1')) return port;
  }
  return findFreePort('127.0.0.1');
}

/** `n` distinct free ports (all held at once while picking, so they differ). */
export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}
