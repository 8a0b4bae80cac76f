import { AttemptAudit } from '../../../src/node/attempt-audit';
import { silentLogger } from '../../../src/util/logger';
import { captureLogs } from '../../helpers/logs';

/** A side whose runs are counted; each run waits for `held` while one is set. */
function side() {
  const s = { runs: 0, held: undefined as Promise<void> | undefined, result: 0 };
  return Object.assign(s, {
    run: async () => {
      s.runs++;
      if (s.held) await s.held;
      return s.result;
    },
  });
}

it("runs the gateway's Cancel side while the owners' look waits on a partition that does not answer", async () => {
  const look = side();
  const cancel = side();
  let release!: () => void;
  look.held = new Promise<void>((r) => (release = r));
  look.result = 2;
  const audit = new AttemptAudit({ ownersLook: look.run, cancelEnded: cancel.run }, 60_000, silentLogger);

  const first = audit.runOnce();
  await new Promise((r) => setImmediate(r));
  expect(cancel.runs).toBe(1);
  // The next pass cancels again, and does not pile a second look up behind the first.
  await expect(audit.runOnce()).resolves.toBe(0);
  expect(look.runs).toBe(1);
  expect(cancel.runs).toBe(2);
  release();
  await expect(first).resolves.toBe(2);
  // Settled, the look runs again.
  look.held = undefined;
  await audit.runOnce();
  expect(look.runs).toBe(2);
  expect(cancel.runs).toBe(3);
});

it('lets a side that fails run again at the next pass, and the other side run regardless', async () => {
  let looks = 0;
  const audit = new AttemptAudit({
    ownersLook: async () => {
      looks++;
      throw new Error('CLUSTERDOWN');
    },
    cancelEnded: async () => 1,
  }, 60_000, silentLogger);
  await expect(audit.runOnce()).resolves.toBe(0);
  await expect(audit.runOnce()).resolves.toBe(0);
  expect(looks).toBe(2);
});

it('runs a pass every period once started, and none once stopped (a draining node gives its attempts back)', async () => {
  jest.useFakeTimers();
  try {
    const look = side();
    const cancel = side();
    const audit = new AttemptAudit({ ownersLook: look.run, cancelEnded: cancel.run }, 60_000, silentLogger);
    audit.start();
    await jest.advanceTimersByTimeAsync(59_000);
    expect(look.runs).toBe(0);
    await jest.advanceTimersByTimeAsync(2_000);
    expect([look.runs, cancel.runs]).toEqual([1, 1]);
    audit.stop();
    await jest.advanceTimersByTimeAsync(180_000);
    // A pass asked for by hand after the stop does nothing either.
    await expect(audit.runOnce()).resolves.toBe(0);
    expect([look.runs, cancel.runs]).toEqual([1, 1]);
  } finally {
    jest.useRealTimers();
  }
});

it('says at WARN how many slots it sent a lost Cancel to, and nothing when there were none', async () => {
  const { logger, lines } = captureLogs<{ level: number; msg: string; cancelled?: number }>();
  let cancelled = 0;
  const audit = new AttemptAudit({ ownersLook: async () => 0, cancelEnded: async () => cancelled }, 60_000, logger);
  await audit.runOnce();
  expect(lines).toEqual([]);
  cancelled = 1;
  await audit.runOnce();
  expect(lines).toEqual([expect.objectContaining({ level: 40, cancelled: 1, msg: expect.stringContaining('without their Cancel') })]);
});
