/**
 * The owners' attempt audit (src/owner/unheld-attempts.ts): an attempt is failed
 * as worker lost only once two looks in a row found it unheld, by the same start
 * nonce. Pure logic: owners that answer from a list of running attempts stand in
 * for the partitions, and the node's answer is a set of held nonces.
 */
import { UnheldAttempts, type AskHeld } from '../../../src/owner/unheld-attempts';
import type { LiveAttempt, PartitionOwner } from '../../../src/owner/partition';

const log = { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined } as never;

const attempt = (partition: number, taskId: string, nonce: string): LiveAttempt => ({
  partition, taskId, attempt: 1, nonce, queue: 'acme:order:pack', node: 'n1', boot: 'b1',
});

/** Owners of `partitions`, each running what `running` holds for it; a read of one in `unreadable` fails. */
function setup(partitions: number[]) {
  const running = new Map<number, LiveAttempt[]>(partitions.map((p) => [p, []]));
  const unreadable = new Set<number>();
  const held = new Set<string>();
  const failed: string[] = [];
  /** What each fail answers (true: it failed the attempt), or throws, by task. */
  const failAnswer = new Map<string, boolean | Error>();
  const owners = partitions.map((partition) => ({
    partition,
    failDeadNodeAttempts: async () => {
      if (unreadable.has(partition)) throw new Error('no answer');
      return [...running.get(partition)!];
    },
    failUnheld: async (a: LiveAttempt) => {
      const answer = failAnswer.get(a.taskId) ?? true;
      if (answer instanceof Error) throw answer;
      if (answer) failed.push(`${a.taskId}/${a.nonce}`);
      return answer;
    },
  }) as unknown as PartitionOwner);
  /** Whether the node gives no answer to trust (unreachable, an older build). */
  const node = { silent: false };
  const askHeld: AskHeld = async (_node, _boot, nonces) => (node.silent ? undefined : nonces.map((n) => held.has(n)));
  const audit = new UnheldAttempts(() => owners, askHeld, log);
  return { audit, running, unreadable, held, failed, failAnswer, node };
}

it('fails an attempt only on a second look in a row that found it unheld', async () => {
  const t = setup([0]);
  t.running.get(0)!.push(attempt(0, 't1', 'n-a'));
  expect(await t.audit.runOnce()).toBe(0);
  t.held.add('n-a'); // held for a look (between two steps of a gateway, say)
  expect(await t.audit.runOnce()).toBe(0);
  t.held.delete('n-a');
  expect(await t.audit.runOnce()).toBe(0); // unheld again: a first look once more
  expect(t.failed).toEqual([]);
  expect(await t.audit.runOnce()).toBe(1);
  expect(t.failed).toEqual(['t1/n-a']);
});

it('takes a new attempt of a task found unheld before as a first look', async () => {
  // The earlier attempt ended, and another of the same task started: only its own looks count.
  const t = setup([0]);
  t.running.get(0)!.push(attempt(0, 't1', 'n-a'));
  expect(await t.audit.runOnce()).toBe(0);
  t.running.set(0, [attempt(0, 't1', 'n-b')]);
  expect(await t.audit.runOnce()).toBe(0);
  expect(t.failed).toEqual([]);
  expect(await t.audit.runOnce()).toBe(1);
  expect(t.failed).toEqual(['t1/n-b']);
});

it('keeps what a look found in a partition it could not read next time for the look after, and nothing of the others', async () => {
  const t = setup([0, 1]);
  t.running.get(0)!.push(attempt(0, 't0', 'n-0'));
  t.running.get(1)!.push(attempt(1, 't1', 'n-1'));
  expect(await t.audit.runOnce()).toBe(0); // both unheld once

  // Partition 0 does not answer; partition 1's attempt has ended.
  t.unreadable.add(0);
  t.running.set(1, []);
  expect(await t.audit.runOnce()).toBe(0);

  // Partition 0 answers again: its attempt was found unheld on the look before the silence.
  // Partition 1's attempt, if Redis says it runs again, starts over from a first look.
  t.unreadable.delete(0);
  t.running.set(1, [attempt(1, 't1', 'n-1')]);
  expect(await t.audit.runOnce()).toBe(1);
  expect(t.failed).toEqual(['t0/n-0']);
});

it('counts only the attempts it failed, and one fail that throws holds none of the others', async () => {
  const t = setup([0]);
  t.running.get(0)!.push(attempt(0, 'ended', 'n-a'), attempt(0, 'broken', 'n-b'), attempt(0, 'lost', 'n-c'));
  t.failAnswer.set('ended', false); // it ended, or another attempt started, since the read
  t.failAnswer.set('broken', new Error('redis went away'));
  expect(await t.audit.runOnce()).toBe(0);
  expect(await t.audit.runOnce()).toBe(1);
  expect(t.failed).toEqual(['lost/n-c']);
});

it('keeps what a look found on a node that gave no answer next time for the look after', async () => {
  const t = setup([0]);
  t.running.get(0)!.push(attempt(0, 't1', 'n-a'));
  expect(await t.audit.runOnce()).toBe(0); // unheld once
  t.node.silent = true;
  expect(await t.audit.runOnce()).toBe(0); // no answer: left as it was
  t.node.silent = false;
  expect(await t.audit.runOnce()).toBe(1); // unheld on the look before the silence, and now
  expect(t.failed).toEqual(['t1/n-a']);
});

describe('a partition whose read does not settle', () => {
  afterEach(() => jest.useRealTimers());

  it('goes on without it after the read wait, reads it again only once that read settled, and uses nothing a late read found', async () => {
    jest.useFakeTimers();
    const running = new Map<number, LiveAttempt[]>([[0, [attempt(0, 't0', 'n-0')]], [1, [attempt(1, 't1', 'n-1')]]]);
    const reads = [0, 0];
    /** While set, a read of partition 0 waits for the test to answer it. */
    let hang: ((found: LiveAttempt[]) => void) | undefined;
    let hanging = false;
    const failed: string[] = [];
    const owners = [0, 1].map((partition) => ({
      partition,
      failDeadNodeAttempts: () => {
        reads[partition]!++;
        if (partition === 0 && hanging) return new Promise<LiveAttempt[]>((resolve) => (hang = resolve));
        return Promise.resolve([...running.get(partition)!]);
      },
      failUnheld: async (a: LiveAttempt) => (failed.push(a.taskId), true),
    }) as unknown as PartitionOwner);
    const audit = new UnheldAttempts(() => owners, async (_n, _b, nonces) => nonces.map(() => false), log);

    expect(await audit.runOnce()).toBe(0); // both unheld once
    hanging = true;
    let done: number | undefined;
    void audit.runOnce().then((n) => (done = n));
    await jest.advanceTimersByTimeAsync(9_900);
    expect(done).toBeUndefined(); // still waiting for partition 0's read
    await jest.advanceTimersByTimeAsync(200);
    expect(done).toBe(1); // partition 1 was not held up by it
    expect(failed).toEqual(['t1']);

    // The next look, partition 0's read still out: it is not read a second time, and what
    // the look before the silence found there stays suspect.
    running.set(1, []);
    const third = audit.runOnce();
    await jest.advanceTimersByTimeAsync(10_100);
    expect(await third).toBe(0);
    expect(reads).toEqual([2, 3]);

    // The read settles late, with what ran when it was made: t0 has ended since. Nothing uses it.
    hang!([attempt(0, 't0', 'n-0')]);
    await jest.advanceTimersByTimeAsync(0);
    hanging = false;
    running.set(0, []);
    expect(await audit.runOnce()).toBe(0);
    expect(reads).toEqual([3, 4]);
    // t0 is gone from the suspects: were it to run again, two more looks would be needed.
    running.set(0, [attempt(0, 't0', 'n-0')]);
    expect(await audit.runOnce()).toBe(0);
    expect(failed).toEqual(['t1']);
  });
});

it('asks each instance of a node about its own attempts only', async () => {
  // A node that restarted: attempts of its old boot and its new one are asked of each boot apart.
  const running = [
    { ...attempt(0, 'old', 'n-old'), boot: 'b1' },
    { ...attempt(0, 'new', 'n-new'), boot: 'b2' },
  ];
  const asked: string[] = [];
  const owner = {
    partition: 0,
    failDeadNodeAttempts: async () => [...running],
    failUnheld: async () => true,
  } as unknown as PartitionOwner;
  const audit = new UnheldAttempts(() => [owner], async (node, boot, nonces) => {
    asked.push(`${node}/${boot}:${nonces.join(',')}`);
    return nonces.map(() => true);
  }, log);
  await audit.runOnce();
  expect(asked.sort()).toEqual(['n1/b1:n-old', 'n1/b2:n-new']);
});
