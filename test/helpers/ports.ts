import { findFreePort } from '../../src/store/embedded-redis';

/** A port free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return findFreePort('127.0.0.1');
}

/** `n` distinct free ports (all held at once while picking, so they differ). */
export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}
