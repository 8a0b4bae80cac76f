/**
 * A node in this process with auth on: tokens files written to a temporary
 * folder from `tokens` (each entry's token in plain text, bound to tenants),
 * its log lines collected as parsed JSON, and a channel to its API.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClientError, Metadata, Status, createChannel, createClient } from 'nice-grpc';
import { ZdNode } from '../../src/node/node';
import { MatchingServiceDefinition } from '../../src/wire';
import { captureLogs } from './logs';
import { startTestNode } from './node';
import { uniquePrefix } from './redis';

export interface TokenEntry {
  token: string;
  tenants?: string[];
  operator?: boolean;
}

export interface AuthNode {
  node: ZdNode;
  channel: ReturnType<typeof createChannel>;
  /** Every log line so far. */
  logs: Record<string, unknown>[];
  /** The folder of the tokens files (workers.yaml, clients.yaml). */
  dir: string;
  close(): Promise<void>;
}

/** Call options that send `token` as the bearer token. */
export const bearer = (token: string) => ({ metadata: Metadata({ authorization: `Bearer ${token}` }) });

/** Whether the node takes `token` as a client token of tenant acme now (a DescribeQueues call); false when UNAUTHENTICATED. */
export async function clientTokenAccepted(node: AuthNode, token: string): Promise<boolean> {
  const client = createClient(MatchingServiceDefinition, node.channel);
  const err = await client.describeQueues({ tenant: 'acme' }, bearer(token)).then(() => undefined, (e: unknown) => e);
  if (err === undefined) return true;
  if (err instanceof ClientError && err.code === Status.UNAUTHENTICATED) return false;
  throw err;
}

function tokensFile(entries: TokenEntry[]): string {
  const lines = entries.map((e) => `  - ${JSON.stringify({ token: e.token, ...(e.tenants ? { tenants: e.tenants } : {}), ...(e.operator ? { operator: true } : {}) })}`);
  return entries.length === 0 ? 'tokens: []\n' : `tokens:\n${lines.join('\n')}\n`;
}

export async function startAuthNode(
  redisUrl: string, label: string, tokens: { workers: TokenEntry[]; clients: TokenEntry[] }, overrides: Record<string, unknown> = {},
): Promise<AuthNode> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `zd-${label}-`));
  const workers = path.join(dir, 'workers.yaml');
  const clients = path.join(dir, 'clients.yaml');
  fs.writeFileSync(workers, tokensFile(tokens.workers));
  fs.writeFileSync(clients, tokensFile(tokens.clients));
  const { logger, lines: logs } = captureLogs('info');
  const t = await startTestNode(redisUrl, uniquePrefix(label), {
    'cluster.partitions': 4, 'drain.timeout': '1s',
    'auth.enabled': true, 'auth.workerTokensFile': workers, 'auth.clientTokensFile': clients,
    ...overrides,
  }, { logger });
  return {
    node: t.node, channel: t.channel, logs, dir,
    async close() {
      await t.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
