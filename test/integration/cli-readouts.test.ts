/**
 * What the built CLI prints for states a healthy node seldom shows: a partition
 * whose lease is gone, and consumer groups last read minutes, hours or days ago.
 * Needs `npm run build` (npm test does it).
 */
import { runCliAsync } from '../helpers/cli';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { Keys } from '../../src/store/keys';

const redis = useEmbeddedRedis();
let t: TestNode;
let prefix: string;

beforeEach(async () => {
  prefix = uniquePrefix('cli-read');
  // A lease renewed only every 20 s: a lease key deleted by hand stays gone while the test reads it.
  t = await startTestNode(redis.url, prefix, { 'cluster.partitions': 3, 'cluster.leaseTtl': '60s', 'cluster.nodeTtl': '60s' });
});
afterEach(async () => {
  await t.close();
});

const addr = () => ['--address', t.node.apiAddress];
const tableRows = (out: string) => out.split('\n').map((l) => l.split('│').map((c) => c.trim()).filter(Boolean)).filter((r) => r.length > 1);

it('cluster counts the partitions without an owner, and --partitions shows each as - with epoch 0', async () => {
  const keys = new Keys(prefix);
  await redis.command('DEL', keys.lease(1));
  const r = await runCliAsync(['cluster', '--partitions', ...addr()]);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  const lines = r.stdout.split('\n');
  expect(lines[0]).toBe('3 partitions, 1 live nodes, 1 partitions without an owner');
  const rows = tableRows(r.stdout);
  expect(rows).toContainEqual([expect.any(String), expect.any(String), '2', expect.stringMatching(/^\d{4}-/)]);
  expect(rows).toContainEqual(['1', '-', '0']);
  expect(rows.filter((row) => row[0] === '0' || row[0] === '2').map((row) => row[1])).toEqual([rows[1]![0], rows[1]![0]]);
});

it('outcome-groups list says how long ago each group was last read, in seconds, minutes, hours or days', async () => {
  const keys = new Keys(prefix);
  const ago = { secs: 20_000, mins: 5 * 60_000, edge: 59 * 60_000, hours: 3 * 3_600_000, lastHours: 47 * 3_600_000, days: 3 * 86_400_000 };
  const now = Date.now();
  for (const [group, ms] of Object.entries(ago)) {
    await redis.command('XGROUP', 'CREATE', keys.out(0), group, '0', 'MKSTREAM');
    await redis.command('HSET', keys.groupsSeen(), group, String(now - ms));
  }
  const r = await runCliAsync(['outcome-groups', 'list', ...addr()]);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  const lastRead = Object.fromEntries(tableRows(r.stdout).slice(1).map((row) => [row[1], row[5]]));
  expect(lastRead).toEqual({
    // 20 s before the CLI started; a loaded runner may take seconds to start it.
    secs: expect.stringMatching(/^2\d s ago$/), mins: '5 min ago', edge: '59 min ago', hours: '3.0 h ago', lastHours: '47.0 h ago', days: '3 d ago',
  });
});
