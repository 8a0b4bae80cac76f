/**
 * The store's listing of a partition's terminal tasks (FetchStore.listTerminal,
 * behind ListTerminalTasks and `zdmatch terminal list`), read a page of the
 * terminal set at a time: oldest first, across pages without a gap or a
 * repeat, only entries whose task is still terminal, at most `limit` of those
 * the filter keeps.
 */
import { FetchStore } from '../../src/store/fetch-store';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'terminal-pages');

/** 300 entries, more than one page: every seventh task queued again, tenants taking turns. */
async function fill(): Promise<{ terminal: string[]; acme: string[] }> {
  const terminal: string[] = [];
  const acme: string[] = [];
  const zadd: (string | number)[] = [];
  const writes = fx.client.pipeline();
  for (let i = 0; i < 300; i++) {
    const id = `t${String(i).padStart(3, '0')}`;
    const tenant = i % 2 === 0 ? 'acme' : 'other';
    const state = i % 7 === 3 ? 'queued' : 'terminal';
    zadd.push(i + 1, id);
    writes.hset(fx.keys.task(0, id), 'state', state, 'tenant', tenant, 'flowType', 'order', 'stepType', 'charge',
      'flowId', `f${i}`, 'seid', `s${i}`, 'attempt', '1', 'termReason', 'failed', 'lockExpiries', '0');
    if (state === 'terminal') {
      terminal.push(id);
      if (tenant === 'acme') acme.push(id);
    }
  }
  await writes.exec();
  await fx.client.zadd(fx.keys.terminal(0), ...zadd);
  return { terminal, acme };
}

it('lists the terminal tasks of every page, oldest first, each once, and none that is no longer terminal', async () => {
  const { terminal } = await fill();
  const store = new FetchStore(fx.client, fx.keys, 60_000);
  const res = await store.listTerminal(0, 1000);
  expect(res.complete).toBe(true);
  expect(res.tasks.map((t) => t.taskId)).toEqual(terminal);
  expect(res.tasks[0]).toMatchObject({ partition: 0, taskId: 't000', terminalAt: 1, tenant: 'acme', flowId: 'f0', stepExecutionId: 's0', reason: 'failed' });
});

it('stops at `limit` of the tasks the filter keeps, past the first page too', async () => {
  const { acme } = await fill();
  const store = new FetchStore(fx.client, fx.keys, 60_000);
  const isAcme = (t: { tenant: string }) => t.tenant === 'acme';
  expect((await store.listTerminal(0, 5, isAcme)).tasks.map((t) => t.taskId)).toEqual(acme.slice(0, 5));
  const past = await store.listTerminal(0, acme.length - 1, isAcme);
  expect(past.tasks.map((t) => t.taskId)).toEqual(acme.slice(0, -1));
  expect(past.complete).toBe(true);
});
