/**
 * `zdmatch serve` forces its exit FORCE_GRACE_MS past drain.timeout when its
 * drain does not end (docs/operations.md "Drain"; the Helm chart's grace period
 * counts on it, test/unit/drain-force-grace.test.ts holds the constant). Here the
 * wiring: serve's signal handling given a node whose drain never ends, the signal
 * emitted in this process, a fake clock and process.exit caught. A deadline of
 * drain.timeout alone, or of the grace alone, would SIGKILL a node still releasing
 * its leases, or leave the kubelet to kill a hung one.
 */
import { loadConfig } from '../../src/config';
import type { ZdNodeLike } from '../../src/cli/common';
import { FORCE_GRACE_MS, onServeShutdown } from '../../src/cli/serve';
import { silentLogger } from '../../src/util/logger';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
let before: Map<string, Function[]>;
let exit: jest.SpyInstance;

beforeEach(() => {
  before = new Map(SIGNALS.map((s) => [s, process.listeners(s)]));
  jest.useFakeTimers();
  exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
});
afterEach(() => {
  // Only the handlers this test set: jest's own stay.
  for (const s of SIGNALS) for (const l of process.listeners(s)) if (!before.get(s)!.includes(l)) process.removeListener(s, l as NodeJS.SignalsListener);
  exit.mockRestore();
  jest.useRealTimers();
});

/** A started node whose drain never ends (a store that stopped answering). */
function stuckNode(): ZdNodeLike & { drained: string[] } {
  const drained: string[] = [];
  return {
    apiAddress: '127.0.0.1:1', httpAddress: '127.0.0.1:2', metricsAddress: '127.0.0.1:3', drained,
    drain: (reason) => {
      drained.push(String(reason));
      return new Promise<void>(() => undefined);
    },
    close: () => Promise.resolve(),
  };
}

it.each([['30s', 30_000], ['2s', 2_000]])('exits 1 once drain.timeout (%s) + FORCE_GRACE_MS has passed since the signal, not before', async (timeout, timeoutMs) => {
  const config = loadConfig({ env: {}, overrides: { 'redis.url': 'redis://127.0.0.1:1', 'drain.timeout': timeout } });
  const node = stuckNode();
  onServeShutdown(config, silentLogger, Promise.resolve(node));
  process.emit('SIGTERM', 'SIGTERM');
  await jest.advanceTimersByTimeAsync(0);
  expect(node.drained).toEqual(['SIGTERM']); // the drain began
  await jest.advanceTimersByTimeAsync(timeoutMs + FORCE_GRACE_MS - 1);
  expect(exit).not.toHaveBeenCalled();
  await jest.advanceTimersByTimeAsync(1);
  expect(exit.mock.calls).toEqual([[1]]);
});
