/**
 * Which errors say "the store is out of reach for now" (ZD_STORE_UNAVAILABLE,
 * retried by clients) and which are a fault (ZD_INTERNAL): ioredis's own
 * errors for a lost connection, socket errors, and the Redis replies of a
 * store that will serve again (a failover, a migration, a load, a busy
 * script, OOM), each under the first line of its message; a reply that says
 * the call itself is wrong is none of them.
 */
import { ReplyError } from 'ioredis';
import ClusterAllFailedError from 'ioredis/built/errors/ClusterAllFailedError';
import MaxRetriesPerRequestError from 'ioredis/built/errors/MaxRetriesPerRequestError';
import { storeUnavailable } from '../../../src/errors/store-unavailable';

const reply = (message: string): Error => new ReplyError(message) as Error;
const socket = (code: string): Error => Object.assign(new Error(`connect ${code} 127.0.0.1:6379`), { code });

it('takes ioredis giving up on a connection or a Cluster as unavailable', () => {
  const errors: Error[] = [
    new MaxRetriesPerRequestError(20) as unknown as Error,
    new ClusterAllFailedError('Failed to refresh slots cache.', new Error('connect ECONNREFUSED')) as unknown as Error,
    new Error('Connection is closed.'), new Error("Stream isn't writeable and enableOfflineQueue options is false"),
    new Error('Too many Cluster redirections. Last error: Error: Connection is closed.'),
  ];
  for (const err of errors) {
    expect([err.message, storeUnavailable(err)?.zdCode]).toEqual([err.message, 'ZD_STORE_UNAVAILABLE']);
  }
});

it('takes each socket error of a store out of reach as unavailable', () => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']) {
    expect([code, storeUnavailable(socket(code))?.zdCode]).toEqual([code, 'ZD_STORE_UNAVAILABLE']);
  }
});

it('takes each reply of a store that will serve again as unavailable', () => {
  for (const message of [
    "OOM command not allowed when used memory > 'maxmemory'.", 'TRYAGAIN Multiple keys request during rehashing of slot',
    'CLUSTERDOWN The cluster is down', 'LOADING Redis is loading the dataset in memory',
    "READONLY You can't write against a read only replica.", 'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.',
    'NOREPLICAS Not enough good replicas to write.', 'BUSY Redis is busy running a script.',
    'UNBLOCKED the client was unblocked because of a failover',
  ]) {
    expect([message, storeUnavailable(reply(message))?.zdCode]).toEqual([message, 'ZD_STORE_UNAVAILABLE']);
  }
});

it('names the first line of the error as the reason', () => {
  const err = storeUnavailable(new Error('Too many Cluster redirections. Last error: Error: CLUSTERDOWN\n    at Cluster.handleError'));
  expect(err?.details).toBe('ZD_STORE_UNAVAILABLE: the store is unavailable: Too many Cluster redirections. Last error: Error: CLUSTERDOWN');
});

it('leaves errors of the call itself, and what is no Error, to ZD_INTERNAL', () => {
  for (const err of [
    reply('ERR wrong number of arguments for \'hget\' command'), reply('NOSCRIPT No matching script.'),
    reply('WRONGTYPE Operation against a key holding the wrong kind of value'), reply('ERR Error running script: OOMPH'),
    reply('BUSYKEY Target key name already exists.'), new TypeError("Cannot read properties of undefined (reading 'x')"),
    Object.assign(new Error('no such file'), { code: 'ENOENT' }),
  ]) {
    expect([err.message, storeUnavailable(err)]).toEqual([err.message, undefined]);
  }
  expect(storeUnavailable('Connection is closed.')).toBeUndefined();
});
