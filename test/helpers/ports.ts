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

const WORKER_SHARES = 8;

/**
 * A port free on 127.0.0.1 a moment ago, below the ephemeral range when there
 * is room: a test that kills a node and restarts it on the same port must not
 * find the port taken meanwhile as some outgoing connection's local port
 * (bind port 0 hands out ports from that very range).
 */
export async function freePort(): Promise<number> {
  const top = ephemeralLow() - 1;
  const bottom = Math.max(10000, top - 12000);
  // Each jest worker picks from its own share of the range: two test files
  // running at once can then never pick the same port between pick and bind.
  const share = Math.floor((top - bottom) / WORKER_SHARES);
  const low = bottom + share * ((Number(process.env.JEST_WORKER_ID ?? 1) - 1) % WORKER_SHARES);
  const high = low + share;
  for (let i = 0; high > low && i < 100; i++) {
    const port = low + Math.floor(Math.random() * (high - low));
    // Never the same port twice in one test process: nodes started side by side
    // pick their ports before either has bound them.
    if (handedOut.has(port)) continue;
    if (await isPortFree(port, '127.0.0.1')) {
      handedOut.add(port);
      return port;
    }
  }
  return findFreePort('127.0.0.1');
}

const handedOut = new Set<number>();

/** `n` distinct free ports (all held at once while picking, so they differ). */
export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}
