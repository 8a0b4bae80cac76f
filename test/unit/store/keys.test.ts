import calculateSlot from 'cluster-key-slot';
import { Keys, parseQueueName, partitionOf, partitionOfTaskId, queueName, taskIdIn, taskIdOf } from '../../../src/store/keys';

// Task ids and partitions are stored: a new build must give the ones earlier builds
// gave (an enqueue retried across an upgrade stays idempotent; a flow keeps its partition).
// These were computed with crypto's SHA-1 before the hash moved to JavaScript.
const PINNED: [tenant: string, flowId: string, stepExecutionId: string, partition: number, taskId: string][] = [
  ['acme', 'order-42', 'charge-1', 63, '63-aaed7241a73d3abbddf5206d'],
  ['t', 'f', '', 5, '5-350425b4f6800c2ae48dc872'],
  ['tenant-a', '3f2b8c9e-1d4a-4e5b-9c7d-2a1b0c9d8e7f', '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b', 58, '58-0762dbc0724bf954feed95bb'],
  ['münchen', 'fluß', 'schritt', 57, '57-5202c4b95768cd0bd87b4339'], // not ASCII: crypto
  ['acme', 'x'.repeat(200), 's', 20, '20-37d6f61b962a824865cd0de9'], // longer than two blocks: crypto
];

describe('keys: partition and task id', () => {
  it.each(PINNED)('%s / %s / %s keeps the partition and task id of earlier builds', (tenant, flowId, seid, partition, taskId) => {
    expect(partitionOf(tenant, flowId, 64)).toBe(partition);
    expect(taskIdIn(partition, tenant, flowId, seid)).toBe(taskId);
    expect(taskIdOf(tenant, flowId, seid, 64)).toBe(taskId);
    expect(partitionOfTaskId(taskId, 64)).toBe(partition);
  });

  it('spreads flows over every partition', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) seen.add(partitionOf('acme', `flow-${i}`, 64));
    expect(seen.size).toBe(64);
  });
});

describe('keys: the partition of a task id', () => {
  it('is undefined for a partition the store does not have, or an id that is not a task id', () => {
    expect(partitionOfTaskId('63-aaed7241a73d3abbddf5206d', 64)).toBe(63);
    expect(partitionOfTaskId('64-aaed7241a73d3abbddf5206d', 64)).toBeUndefined();
    for (const id of ['63-aaed7241a73d3abbddf5206', '63-aaed7241a73d3abbddf5206d0', '63-AAED7241A73D3ABBDDF5206D', 'x63-aaed7241a73d3abbddf5206d', '1234567-aaed7241a73d3abbddf5206d']) {
      expect(partitionOfTaskId(id, 64)).toBeUndefined();
    }
  });
});

describe('keys: names in Redis', () => {
  const k = new Keys('zd');

  it('keeps the key names of earlier builds: data written by one is found by the next', () => {
    expect([
      k.tag(7), k.task(7, 't1'), k.queue(7, 'a:b:c'), k.queues(7), k.inflight(7), k.deadlines(7), k.flow(7, 'acme', 'f1'),
      k.sticky(7, 'acme', 'f1'), k.terminal(7), k.out(7), k.done(7, 't1'), k.readMark(7), k.lease(7), k.epoch(7),
      k.members(), k.node('n1'), k.groups(), k.groupsSeen(), k.groupsDropped(), k.meta(),
    ]).toEqual([
      'zd:{7}:', 'zd:{7}:t:t1', 'zd:{7}:q:a:b:c', 'zd:{7}:queues', 'zd:{7}:inflight', 'zd:{7}:deadlines', 'zd:{7}:flow:acme:f1',
      'zd:{7}:sticky:acme:f1', 'zd:{7}:terminal', 'zd:{7}:out', 'zd:{7}:done:t1', 'zd:{7}:mark', 'zd:{7}:lease', 'zd:{7}:epoch',
      'zd:members', 'zd:node:n1', 'zd:groups', 'zd:groups:seen', 'zd:groups:dropped', 'zd:meta',
    ]);
  });

  it('puts every key of a partition in one Redis Cluster hash slot, and partitions apart', () => {
    for (const p of [0, 1, 63]) {
      const keys = [
        k.task(p, 'x'), k.queue(p, 'a:b:c'), k.queues(p), k.inflight(p), k.deadlines(p), k.flow(p, 't', 'f'), k.sticky(p, 't', 'f'),
        k.terminal(p), k.out(p), k.done(p, 'x'), k.readMark(p), k.lease(p), k.epoch(p),
      ];
      expect(new Set(keys.map((key) => calculateSlot(key)))).toEqual(new Set([calculateSlot(`{${p}}`)]));
    }
    expect(calculateSlot(k.task(1, 'x'))).not.toBe(calculateSlot(k.task(2, 'x')));
  });
});

describe('keys: queue names', () => {
  it('joins and splits tenant, flow type and step type', () => {
    expect(queueName('acme', 'order', 'charge')).toBe('acme:order:charge');
    expect(parseQueueName('acme:order:charge')).toEqual({ tenant: 'acme', flowType: 'order', stepType: 'charge' });
    expect(parseQueueName('acme')).toEqual({ tenant: 'acme', flowType: '', stepType: '' });
  });
});
