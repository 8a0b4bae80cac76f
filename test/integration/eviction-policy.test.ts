/**
 * A node says at WARN when it boots on a Redis whose maxmemory-policy may
 * evict keys (store/eviction-policy.ts): under memory pressure such a Redis
 * drops task hashes or done records without an error to anyone. Silent under
 * noeviction; where CONFIG is refused (managed Redis services rename it) the
 * node says it could not tell, and boots. Real redis-servers, real nodes.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { startTestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';

const lru = useEmbeddedRedis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
const noConfig = useEmbeddedRedis({ args: ['--rename-command', 'CONFIG', ''] });

interface Line { level: number; msg: string; maxmemoryPolicy?: string; err?: string }

/** Boots a node on `url` with its log captured, closes it, and returns the lines that speak of maxmemory-policy. */
async function bootLines(url: string): Promise<Line[]> {
  const lines: Line[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
  const t = await startTestNode(url, uniquePrefix('evict'), {}, { logger: pino({ level: 'info' }, sink) });
  await t.close();
  return lines.filter((l) => /maxmemory-policy/.test(l.msg));
}

it('warns at boot when Redis may evict keys, naming the policy', async () => {
  const lines = await bootLines(lru.url);
  expect(lines).toEqual([expect.objectContaining({ level: 40, maxmemoryPolicy: 'allkeys-lru' })]);
  expect(lines[0]!.msg).toMatch(/^Redis maxmemory-policy is allkeys-lru: .* set it to noeviction$/);
});

// volatile-* keep the task hashes (they have no TTL) but take done records, sticky keys and leases.
it.each(['volatile-lru', 'allkeys-random', 'volatile-ttl'])('warns under %s too', async (policy) => {
  await lru.command('CONFIG', 'SET', 'maxmemory-policy', policy);
  try {
    expect(await bootLines(lru.url)).toEqual([expect.objectContaining({ level: 40, maxmemoryPolicy: policy })]);
  } finally {
    await lru.command('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
  }
});

it('says nothing under noeviction', async () => {
  await lru.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
  try {
    expect(await bootLines(lru.url)).toEqual([]);
  } finally {
    await lru.command('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
  }
});

it('boots where CONFIG is refused, saying at INFO that it could not read the policy', async () => {
  const lines = await bootLines(noConfig.url);
  expect(lines).toEqual([expect.objectContaining({ level: 30, err: expect.stringMatching(/unknown command/i) })]);
  expect(lines[0]!.msg).toBe('could not read Redis maxmemory-policy; zdmatch needs noeviction');
});
