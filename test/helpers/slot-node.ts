/**
 * One node per test and the raw worker slots the test opens on it. The slots
 * are reset before the node closes, so a test never leaves a stream behind to
 * hold the node's drain.
 */
import type { pb } from '../../src/wire';
import { uniquePrefix, type TestRedis } from './redis';
import { startTestNode, type TestNode } from './node';
import { openSlot, registerFrame, type RawSlot } from './raw-slot';

export interface SlotNode {
  /** The running test's node. */
  readonly t: TestNode;
  /** Opens a slot on the node with a Register frame built from `over`. */
  slot(over?: Partial<pb.IRegister>): RawSlot;
  /** Opens a slot and waits for its Registered frame. */
  registeredSlot(over?: Partial<pb.IRegister>): Promise<RawSlot>;
  /** Resets `s` with the test's other slots (for slots opened with other frames or clients). */
  track(s: RawSlot): RawSlot;
}

/** Registers the hooks in the calling scope: a node from `label` and `config` before each test. */
export function useSlotNode(redis: TestRedis, label: string, config: Record<string, unknown> = {}): SlotNode {
  let node: TestNode | undefined;
  const open: RawSlot[] = [];
  beforeEach(async () => {
    node = await startTestNode(redis.url, uniquePrefix(label), config);
  });
  afterEach(async () => {
    for (const s of open.splice(0)) s.reset();
    await node?.close();
    node = undefined;
  });
  const env: SlotNode = {
    get t() {
      if (!node) throw new Error('no node outside a test');
      return node;
    },
    slot: (over = {}) => env.track(openSlot(env.t.worker, registerFrame(over))),
    async registeredSlot(over = {}) {
      const s = env.slot(over);
      await s.nextOf('registered');
      return s;
    },
    track(s) {
      open.push(s);
      return s;
    },
  };
  return env;
}
