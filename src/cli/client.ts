import { Client } from '../sdk/client';

/** Runs `fn` with an SDK client for `address` and closes it afterwards. */
export async function withClient<T>(address: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ address });
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}
