import fs from 'node:fs';
import type { Client } from '../sdk/client';
import type { Credential, TlsOptions } from '../sdk/common';
import { TOKEN } from '../sdk/common/credential-option';
import { CliExit, EXIT_CONFIG } from './common';

/**
 * `--address` checked before anything is dialled: `[http(s)://]host:port` with a
 * port from 1 to 65535. Without a port the channel would dial port 80 (or 443),
 * and an address a firewall drops would take the whole connect timeout to say so.
 */
export function checkedAddress(address: string): string {
  const m = /^(?:https?:\/\/)?(\[[0-9a-fA-F:.]+\]|[^\s/:[\]]+):(\d{1,5})$/.exec(address);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) {
    throw new CliExit(`--address: must be host:port (port 1-65535), optionally after http:// or https:// (got ${JSON.stringify(address)})`, EXIT_CONFIG);
  }
  return address;
}

/**
 * The client commands' credential and TLS, from the environment (docs/security.md):
 * ZD_TOKEN (a client token), or ZD_TOKEN_FILE (a file holding one); ZD_TLS_CA
 * (a CA file: connect over TLS, verifying the server against it).
 */
export function cliConnection(env = process.env): { credential?: Credential; tls?: TlsOptions } {
  const out: { credential?: Credential; tls?: TlsOptions } = {};
  if (env.ZD_TOKEN_FILE) out.credential = { file: readableTokenFile(env.ZD_TOKEN_FILE) };
  else if (env.ZD_TOKEN) out.credential = usableToken(env.ZD_TOKEN);
  if (env.ZD_TLS_CA) out.tls = { ca: readCa(env.ZD_TLS_CA) };
  return out;
}

/** A token the SDK would refuse (a space, a newline from `$(cat file)` kept by quoting) is the setting's error, exit 2. */
function usableToken(token: string): string {
  if (!TOKEN.test(token)) throw new CliExit('ZD_TOKEN: must be printable ASCII without spaces or newlines (or use ZD_TOKEN_FILE)', EXIT_CONFIG);
  return token;
}

/**
 * Checked here, as ZD_TLS_CA is: a wrong path is a usage error naming the setting, exit 2.
 * The client still reads the file at each call (a rotated token is picked up).
 */
function readableTokenFile(file: string): string {
  try {
    fs.accessSync(file, fs.constants.R_OK);
  } catch (err) {
    throw new CliExit(`ZD_TOKEN_FILE: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, EXIT_CONFIG);
  }
  return file;
}

/** Read here, so that a wrong path is told as the setting's, not as a bare `ENOENT: ... open '...'`. */
function readCa(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new CliExit(`ZD_TLS_CA: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, EXIT_CONFIG);
  }
}

/** Runs `fn` with an SDK client for `address` and closes it afterwards. */
export async function withClient<T>(address: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const dialled = { address: checkedAddress(address), ...cliConnection() };
  // Loaded here, not at the top: the SDK and its codecs are most of a start's module loading.
  const { Client: SdkClient } = await import('../sdk/client');
  const client = new SdkClient(dialled);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}
