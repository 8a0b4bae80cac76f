import { Client } from '../sdk/client';
import type { Credential, TlsOptions } from '../sdk/common';

/**
 * The client commands' credential and TLS, from the environment (docs/security.md):
 * ZD_TOKEN (a client token), or ZD_TOKEN_FILE (a file holding one); ZD_TLS_CA
 * (a CA file: connect over TLS, verifying the server against it).
 */
export function cliConnection(env = process.env): { credential?: Credential; tls?: TlsOptions } {
  const out: { credential?: Credential; tls?: TlsOptions } = {};
  if (env.ZD_TOKEN_FILE) out.credential = { file: env.ZD_TOKEN_FILE };
  else if (env.ZD_TOKEN) out.credential = env.ZD_TOKEN;
  if (env.ZD_TLS_CA) out.tls = { ca: env.ZD_TLS_CA };
  return out;
}

/** Runs `fn` with an SDK client for `address` and closes it afterwards. */
export async function withClient<T>(address: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ address, ...cliConnection() });
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}
