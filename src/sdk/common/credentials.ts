import fs from 'node:fs';
import { ChannelCredentials } from '@grpc/grpc-js';
import { createChannel, Metadata, type Channel } from 'nice-grpc';
import type { BackoffOptions } from './backoff';
import { TOKEN } from './credential-option';

/**
 * A bearer token: the token itself, `{ file }` (a file holding the token,
 * re-read whenever it changes, so a rotated token is picked up without a
 * restart), or a function returning one. It is resolved each time a stream
 * opens (and on every reconnect) or a call starts; a credential that cannot
 * be resolved fails the call with a CredentialError before anything is sent.
 */
export type Credential = string | { file: string } | (() => string | Promise<string>);

/** The credential could not be resolved (unreadable or empty file, a function that threw or returned nothing). */
export class CredentialError extends Error {
  override name = 'CredentialError';
}

const fileCache = new Map<string, { stamp: string; token: string }>();

async function readTokenFile(file: string): Promise<string> {
  let stamp: string;
  try {
    const st = await fs.promises.stat(file);
    stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch (err) {
    throw new CredentialError(`credential file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  const hit = fileCache.get(file);
  if (hit && hit.stamp === stamp) return hit.token;
  let token: string;
  try {
    token = (await fs.promises.readFile(file, 'utf8')).trim();
  } catch (err) {
    throw new CredentialError(`credential file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  if (!token) throw new CredentialError(`credential file ${file}: is empty`);
  fileCache.set(file, { stamp, token });
  return token;
}

/** The token of a credential now; '' for none. Throws CredentialError when it cannot be resolved. */
export async function resolveCredential(credential: Credential | undefined): Promise<string> {
  if (credential === undefined || credential === '') return '';
  let token: string;
  if (typeof credential === 'string') token = credential;
  else if (typeof credential === 'function') {
    try {
      token = await credential();
    } catch (err) {
      throw new CredentialError(`credential function failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
    if (typeof token !== 'string' || !token) throw new CredentialError('credential function returned no token');
  } else if (credential && typeof credential === 'object' && typeof credential.file === 'string') {
    token = await readTokenFile(credential.file);
  } else {
    throw new CredentialError('credential must be a string, { file }, or a function');
  }
  if (!TOKEN.test(token)) throw new CredentialError('the token must be printable ASCII without spaces');
  return token;
}

/** Call metadata carrying `authorization: Bearer <token>` when a credential is set. */
export async function authMetadata(credential: Credential | undefined): Promise<Metadata> {
  return metadataFor(await resolveCredential(credential));
}

/** Call metadata for a resolved token ('' for none). */
export function metadataFor(token: string): Metadata {
  const metadata = new Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

/** TLS of an SDK channel. */
export interface TlsOptions {
  /** PEM of the CA that signed the server's certificate: a file path or the PEM bytes. @default the system roots */
  ca?: string | Buffer;
  /** For mutual TLS: PEM client certificate and key (file paths or bytes). */
  cert?: string | Buffer;
  key?: string | Buffer;
}

const pem = (v: string | Buffer | undefined): Buffer | null =>
  v === undefined ? null : Buffer.isBuffer(v) ? v : fs.readFileSync(v);

/** How often an SDK channel with calls open PINGs the node, and how long it waits for the answer. */
export const KEEPALIVE_MS = 30_000;
const KEEPALIVE_TIMEOUT_MS = 10_000;

/**
 * A channel to `address`; over TLS when `tls` is set (or the address starts with https://).
 * HTTP/2 keepalive PINGs while calls are open: a connection that goes silent without closing
 * (a frozen node, a network that black-holes it) fails its streams within keepaliveMs plus
 * the timeout, rather than when TCP gives up many minutes later. A slot waiting for its
 * result's ack hears no Pings of the node's to notice it by; the other streams reconnect
 * on the dead connection until it fails. (A server or balancer that finds the PINGs too
 * frequent says so, and grpc-js then PINGs less often.)
 * The connection itself is redialled on `reconnect` (the SDK's default backoff, 100 ms to
 * 10 s) rather than grpc-js's own (1 s growing to 120 s): under it, calls fail at once without
 * dialling, so a worker whose node was down for a minute came back up to two minutes after the
 * node, whatever its reconnectBackoff said, and a producer's enqueues failed as long.
 */
export function createSdkChannel(
  address: string, tls: TlsOptions | boolean | undefined, keepaliveMs = KEEPALIVE_MS, reconnect: BackoffOptions = {},
): Channel {
  const options: Record<string, number> = {
    // No channelz bookkeeping: nothing reads it, and grpc-js pays for it on every call and message.
    'grpc.enable_channelz': 0,
    // A connection of this channel's own, not one shared with other channels to the same
    // address: a Worker's new channel after a Reconnect must dial anew (worker.ts renewChannel).
    'grpc.use_local_subchannel_pool': 1,
    'grpc.keepalive_time_ms': keepaliveMs,
    'grpc.keepalive_timeout_ms': Math.min(KEEPALIVE_TIMEOUT_MS, keepaliveMs),
  };
  options['grpc.initial_reconnect_backoff_ms'] = reconnect.initialMs ?? 100;
  options['grpc.max_reconnect_backoff_ms'] = reconnect.maxMs ?? 10_000;
  if (!tls) return createChannel(address, undefined, options);
  const t = tls === true ? {} : tls;
  return createChannel(address.replace(/^https?:\/\//, ''), ChannelCredentials.createSsl(pem(t.ca), pem(t.key), pem(t.cert)), options);
}
