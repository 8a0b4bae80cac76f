/**
 * The owners' attempt audit: attempts Redis says run in a slot of a live node that
 * no slot there holds are failed as worker lost (the retry policy runs). Every end
 * of an attempt is a script; when Redis loses one that it acknowledged (a failover
 * to a replica it had not reached, a restart from an older snapshot), the task is
 * back to running on a node, in a slot long free. The dead-node sweep ends only the
 * attempts of node instances that are gone, and a method or heartbeat timeout ends
 * a late one, but a Step without timeouts on a node that lives would run for ever:
 * no outcome, its flow waiting on it (DESIGN §11.3: every task gets exactly one
 * outcome).
 *
 * Each owner reads the running attempts of the partitions it owns (the same look
 * runs the dead-node sweep), and asks each node those attempts run on which of them
 * its slots hold. So the cluster reads each running attempt once a look, not once
 * per node. An attempt whose start or end the node has on its way, or retries while
 * Redis does not answer, counts as held. One is failed once two looks in a row
 * found it unheld: what is unheld for a moment between two steps of a gateway is
 * never unheld for a whole interval. A node that does not answer (unreachable, an
 * older build) leaves its attempts as they were: safety never waits on a peer's
 * answer, only this repair does.
 */
import type { Logger } from '../util/logger';
import { within } from '../util/within';
import type { LiveAttempt, PartitionOwner } from './partition';

/** Which of these start nonces the node instance's slots hold, in order; undefined when it gave no answer to trust. */
export type AskHeld = (nodeId: string, bootId: string, nonces: string[]) => Promise<boolean[] | undefined>;

/**
 * How long a look waits for its partitions' reads. A read takes milliseconds; one
 * still out after this is held by a primary that stopped answering, and the look
 * goes on with the others (it comes once a minute).
 */
const READ_WAIT_MS = 10_000;

const attemptKey = (a: LiveAttempt) => `${a.partition}\0${a.taskId}\0${a.nonce}`;
const instanceOf = (a: LiveAttempt) => `${a.node}\0${a.boot}`;

export class UnheldAttempts {
  /** The attempts the last look found unheld, by attemptKey, with their node instance. */
  private suspects = new Map<string, string>();

  /** Partitions whose read of a look before has not settled. */
  private readonly reading = new Set<number>();

  constructor(
    private readonly owned: () => PartitionOwner[],
    private readonly askHeld: AskHeld,
    private readonly log: Logger,
  ) {}

  /** One look over the partitions owned here; returns how many attempts it failed. */
  async runOnce(): Promise<number> {
    const owners = this.owned();
    const byPartition = new Map(owners.map((o) => [o.partition, o]));
    // Each partition read on its own, the look waiting a while for them: on a Redis Cluster one on a
    // primary that stopped answering held the look of every other until its failover. One not read
    // by then (or still out from a look before) is unread this look, as one whose read failed.
    const read = new Map<number, LiveAttempt[]>();
    await within(Promise.all(owners.filter((o) => !this.reading.has(o.partition)).map((o) => {
      this.reading.add(o.partition);
      return o.failDeadNodeAttempts().then((found) => void read.set(o.partition, found), (err: Error) => {
        this.log.warn({ partition: o.partition, err: err.message }, 'attempt audit could not read a partition');
      }).finally(() => this.reading.delete(o.partition));
    })), READ_WAIT_MS);
    const live: LiveAttempt[] = [];
    const unread = new Set<number>();
    for (const o of owners) {
      const found = read.get(o.partition);
      if (found) live.push(...found);
      else unread.add(o.partition);
    }
    const byInstance = new Map<string, LiveAttempt[]>();
    for (const a of live) {
      const list = byInstance.get(instanceOf(a));
      if (list) list.push(a);
      else byInstance.set(instanceOf(a), [a]);
    }
    const unheld = new Map<string, string>();
    const unasked = new Set<string>();
    const failing: LiveAttempt[] = [];
    await Promise.all([...byInstance.values()].map(async (attempts) => {
      const { node, boot } = attempts[0]!;
      // Asked after the reads: an attempt started before its partition was read and held since counts as held.
      const held = await this.askHeld(node, boot, attempts.map((a) => a.nonce));
      if (!held) {
        unasked.add(instanceOf(attempts[0]!));
        return;
      }
      attempts.forEach((a, i) => {
        if (held[i]) return;
        const key = attemptKey(a);
        unheld.set(key, instanceOf(a));
        if (this.suspects.has(key)) failing.push(a);
      });
    }));
    // What the last look found where this one could not read or ask stays suspect for the next.
    for (const [key, instance] of this.suspects) {
      if (unasked.has(instance) || unread.has(Number(key.slice(0, key.indexOf('\0'))))) unheld.set(key, instance);
    }
    this.suspects = unheld;
    // Each fail on its own too: one on a primary that stopped answering holds no other.
    let failed = 0;
    await Promise.all(failing.map(async (a) => {
      const owner = byPartition.get(a.partition);
      if (!owner) return;
      try {
        if (!(await owner.failUnheld(a))) return;
        failed++;
        this.log.warn({ partition: a.partition, taskId: a.taskId, attempt: a.attempt, node: a.node },
          'attempt running in Redis that no slot of its node holds (its end was not recorded) failed as worker lost');
      } catch (err) {
        this.log.warn({ taskId: a.taskId, err: (err as Error).message }, 'attempt audit could not fail an attempt no slot holds');
      }
    }));
    return failed;
  }
}
