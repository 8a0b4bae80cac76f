/**
 * A Sentinel client that ioredis ended without being asked, connected again.
 *
 * ioredis's failover detector (failoverDetector: true) stays subscribed to
 * +switch-master after its connection closed. When the primary dies, the client
 * reconnects, asking a Sentinel for the primary each time; a +switch-master that
 * arrives during that question disconnects the connector, the connect under way
 * then fails with "Connection is closed.", and ioredis sets the client's status
 * to 'end' for good: after a primary was killed, every later call of that client
 * failed, and the node served nothing until restarted.
 */
import type { Redis } from 'ioredis';

/** How long after such an end the client connects again: the Sentinel's answer is what changed. */
const REVIVE_AFTER_MS = 100;

export function reviveUnaskedEnd(client: Redis): void {
  // An end asked for goes through disconnect() (quit() ends through it as well, once Redis answers).
  let asked = false;
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect = false) => {
    if (!reconnect) asked = true;
    disconnect(reconnect);
  };
  const quit = client.quit.bind(client);
  client.quit = ((...args: Parameters<typeof quit>) => {
    asked = true;
    return quit(...args);
  }) as typeof client.quit;
  client.on('end', () => {
    if (asked) return;
    setTimeout(() => {
      if (!asked && client.status === 'end') client.connect().catch(() => undefined);
    }, REVIVE_AFTER_MS).unref();
  });
}
