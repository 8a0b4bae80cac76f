/**
 * A fetch-and-lock over HTTP whose client never reads the answer: the node gives the
 * connection limits.httpRequestTimeout to take the response, then closes it and gives
 * the claimed locks back at once, instead of holding the socket, the response's memory
 * and the locks for good. One node, a raw TCP client that stops reading, a real redis-server.
 */
import net from 'node:net';
import { partitionOf } from '../../src/store/keys';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { sleep, waitFor } from '../helpers/wait';
import { fetchClients } from '../helpers/fetch';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

it('closes the connection of a client that reads none of its answer, and gives its locks back', async () => {
  t = await startTestNode(redis.url, uniquePrefix('http-stall'), {
    'limits.httpRequestTimeout': '2s', 'limits.httpHeadersTimeout': '1s', 'fetch.maxWait': '1s', 'fetch.wait': '1s',
  });
  const input = Buffer.alloc(960_000, 7); // four to an answer: about 5 MB of JSON, more than the kernel's socket buffers take
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) {
    ids.push((await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: `big-${i}`, flow_type: 'order', step_type: 'big', step_execution_id: 'x', input } })).task_id);
  }
  // Read from the task hashes: a GetTask answers each task's 960 KB input, and eight of them took
  // long enough on a loaded machine to miss the staller's locks, held only limits.httpRequestTimeout.
  const taskKeys = ids.map((id, i) => t.node.keys.task(partitionOf('acme', `big-${i}`, t.config.cluster.partitions), id));
  const heldByStaller = async () => {
    const held = await Promise.all(taskKeys.map(async (key) => {
      const [state, worker] = await redis.command('HMGET', key, 'state', 'lockWorker') as (string | null)[];
      return state === 'locked' && worker === 'staller';
    }));
    return held.filter(Boolean).length;
  };
  const [host, port] = t.node.httpAddress!.split(':') as [string, string];
  const body = JSON.stringify({ workerId: 'staller', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'big' }], waitMs: 1, maxTasks: 8, lockDurationMs: 600_000 });
  let socket!: net.Socket;
  const closed = new Promise<void>((resolve) => {
    socket = net.connect({ host, port: Number(port) }, () => {
      socket.pause(); // reads nothing
      socket.write(`POST /v1/external-tasks/fetch-and-lock HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    });
    socket.on('close', () => resolve());
    socket.on('error', () => undefined);
  });
  // Its fetch claimed tasks (on a busy machine the request can take a while to be served) ...
  await waitFor(async () => (await heldByStaller()) > 0, { timeoutMs: 15_000, intervalMs: 20, description: 'the staller\'s fetch to claim tasks' });
  // ... and limits.httpRequestTimeout after its answer began, the locks it never saw are back, not in ten minutes.
  await waitFor(async () => (await heldByStaller()) === 0, { timeoutMs: 15_000, intervalMs: 200, description: 'the staller\'s locks given back' });
  // Another worker takes every task now.
  const { external } = fetchClients(t);
  const taken = new Set<string>();
  for (let i = 0; i < 4; i++) { // an answer carries about four of these
    const r = await external.fetchAndLock({ worker_id: `other-${i}`, topics: [{ tenant: 'acme', flow_type: 'order', step_type: 'big' }], max_tasks: 8, wait_ms: 1 });
    for (const x of r.tasks) taken.add(x.task_id!);
  }
  expect(taken.size).toBe(8);
  // and the node closed the connection: reading again, the client finds it ended
  socket.resume();
  await expect(Promise.race([closed.then(() => 'closed'), sleep(5000).then(() => 'open')])).resolves.toBe('closed');
}, 60_000);
