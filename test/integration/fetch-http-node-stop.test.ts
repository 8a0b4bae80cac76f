/**
 * A fetch over HTTP whose claim is still in flight when the node stops (a
 * rolling deploy): its answer must reach the worker, or its locks go back.
 * Closing every HTTP connection at once lost the answer of such a fetch, and
 * Redis was closed before the locks could be given back: the tasks sat out a
 * lock nobody held. One node, a real HTTP client, a real redis-server.
 */
import { step } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

it('answers an HTTP fetch whose claim is in flight when the node stops', async () => {
  t = await startTestNode(redis.url, uniquePrefix('http-stop'));
  const surface = t.node.externalTasks!;
  let onClaim!: () => void;
  const claimed = new Promise<void>((r) => (onClaim = r));
  surface.hooks.afterClaim = async () => {
    onClaim();
    await sleep(300); // the claimed tasks are on their way to the answer while the node stops
  };
  const answer = fetch(`http://${t.node.httpAddress}/v1/external-tasks/fetch-and-lock`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workerId: 'A', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 10_000, lockDurationMs: 600_000 }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as { tasks: { taskId: string }[] } }), (err: Error) => err);
  await sleep(100); // the fetch waits
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  await claimed;
  const stopped = t.node.close();
  const r = await answer;
  await stopped;
  expect(r).toEqual({ status: 200, body: { tasks: [expect.objectContaining({ taskId: id })] } });
});
