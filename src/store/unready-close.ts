/**
 * Calls lost with a connection that closed before it was ready, sent again instead.
 *
 * Before a new connection is ready, ioredis already writes the commands Redis
 * takes while it loads (TIME, PUBLISH, INFO), and waits for their replies in the
 * connection's command queue. If that connection closes before it is ready (a
 * network that drops it mid-handshake, a proxy that holds it), ioredis neither
 * resends those commands, as it does for a ready connection's, nor fails them:
 * the next connect replaces the queue, and their promises never settle. The
 * membership heartbeat awaited such a TIME and stopped for good; its peers took
 * the node for gone while it served. They go back to the offline queue now,
 * ahead of what was sent after them: sent on the next ready connection, or
 * failed, like the rest of that queue, once maxRetriesPerRequest reconnects fail.
 * (ioredis's own handshake calls among them are sent again too: a second CLIENT
 * SETNAME, and a ready check whose answer ioredis drops as an old connection's.)
 */
import type { Redis } from 'ioredis';

type Queued = object;
interface Queue { length: number; shift(): Queued | undefined; unshift(item: Queued): void }
/** The part of ioredis's client state this touches: the closed connection's queue, the one resent on the next, and the offline queue. */
interface ClientQueues { commandQueue: Queue; prevCommandQueue: Queue | null; offlineQueue: Queue }

export function resendCallsOfUnreadyClose(client: Redis): void {
  // 'close' is emitted a tick after ioredis handled the close, and the reconnect comes later still
  // (retryStrategy: 50 ms at the least): the queue is still that connection's.
  client.on('close', () => {
    const state = client as unknown as ClientQueues;
    const queue = state.commandQueue;
    // A ready connection's queue is kept as prevCommandQueue and resent once the next one is ready.
    if (!queue || queue.length === 0 || state.prevCommandQueue === queue) return;
    const lost: Queued[] = [];
    for (let item = queue.shift(); item; item = queue.shift()) lost.push(item);
    for (let i = lost.length - 1; i >= 0; i--) state.offlineQueue.unshift(lost[i]!);
  });
}
