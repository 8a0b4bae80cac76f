/**
 * Redis errors that say "not now" rather than "broken": Redis unreachable
 * (refused or lost connections past ioredis's retries, no Cluster node
 * answering) or not serving this call for the moment (a primary mid-failover,
 * a slot mid-migration, a replica that is read-only, a dataset loading, a
 * script running too long, a Redis at its maxmemory under noeviction: OOM,
 * whose reason the producer sees). Such a call answers ZD_STORE_UNAVAILABLE
 * (UNAVAILABLE, HTTP 503), which clients retry, instead of ZD_INTERNAL.
 */
import { zdError, type ZdError } from './server-error';

// NoPrimaryError: store/redis.ts's WAIT for replicas found the slot map naming no primary it can reach.
const UNREACHABLE_ERRORS = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError', 'NoPrimaryError']);
const UNREACHABLE_MESSAGES = ['Connection is closed.', "Stream isn't writeable and enableOfflineQueue options is false"];
/**
 * A Redis Cluster call that ioredis followed `maxRedirections` times (MOVED and ASK, TRYAGAIN while
 * a slot migrates, CLUSTERDOWN or a closed connection while a primary is down or fails over) and
 * gave up on: "Too many Cluster redirections. Last error: …".
 */
const CLUSTER_GAVE_UP = 'Too many Cluster redirections.';
const NOT_NOW_REPLIES = /^(OOM|TRYAGAIN|CLUSTERDOWN|LOADING|READONLY|MASTERDOWN|NOREPLICAS|BUSY|UNBLOCKED)\b/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** ZD_STORE_UNAVAILABLE for an error Redis or its client raised because the store is out of reach for now; otherwise undefined. */
export function storeUnavailable(err: unknown): ZdError | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as NodeJS.ErrnoException).code;
  const transient = UNREACHABLE_ERRORS.has(err.name) || UNREACHABLE_MESSAGES.includes(err.message)
    || NOT_NOW_REPLIES.test(err.message) || err.message.startsWith(CLUSTER_GAVE_UP) || (code !== undefined && SOCKET_CODES.has(code));
  return transient ? zdError('ZD_STORE_UNAVAILABLE', { reason: err.message.split('\n')[0]! }) : undefined;
}
