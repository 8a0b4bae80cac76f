/**
 * How long `zdmatch enqueue --file` keeps retrying a node it cannot reach before
 * the load stops: README.md and docs/operations.md promise backoff "for 10 to
 * 25 s" at the default `--retries`. An operator sizes a maintenance window, or a
 * wrapping script's timeout, by it. The waits between tries are taken on a fake
 * clock (the file's only timer, `node:timers/promises`): the client dials a real
 * closed port, and the span is read off the waits the load asked for.
 */
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '../../src';
import { loadSteps } from '../../src/cli/enqueue-file';
import { backoffMs } from '../../src/sdk/common';
import { runCli } from '../helpers/cli';
import { freePort } from '../helpers/ports';

jest.mock('node:timers/promises', () => ({ setTimeout: jest.fn(() => Promise.resolve()) }));

/** The CLI's default for --retries, as `zdmatch enqueue --help` gives it. */
function defaultRetries(): number {
  const help = runCli(['enqueue', '--help']);
  const m = /--retries <n>[\s\S]*?\(default: "(\d+)"\)/.exec(help.stdout);
  if (!m) throw new Error(`no default for --retries in: ${help.stdout}`);
  return Number(m[1]);
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

it('backs off between 10 and 25 s in all at the default --retries, whatever the jitter', () => {
  const retries = defaultRetries();
  const attempts = Array.from({ length: retries }, (_, i) => i);
  // The jitter at its two ends: half of each wait fixed, half random.
  expect(sum(attempts.map((i) => backoffMs(i, {}, () => 0)))).toBeGreaterThanOrEqual(10_000);
  expect(sum(attempts.map((i) => backoffMs(i, {}, () => 1)))).toBeLessThanOrEqual(25_000);
});

it('retries a batch the node cannot take that many times, waiting that long, then stops the load at its line', async () => {
  const retries = defaultRetries();
  const client = new Client({ address: `127.0.0.1:${await freePort()}` });
  try {
    const line = JSON.stringify({ tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 's1' });
    const summary = await loadSteps(client, Readable.from(`${line}\n`), { batch: 100, inflight: 1, retries, onFailure: () => undefined });
    expect(summary).toMatchObject({ created: 0, failed: 1, stoppedAtLine: 1 });
    const waits = jest.mocked(sleep).mock.calls.map(([ms]) => Number(ms));
    expect(waits).toHaveLength(retries);
    expect(sum(waits)).toBeGreaterThanOrEqual(10_000);
    expect(sum(waits)).toBeLessThanOrEqual(25_000);
  } finally {
    client.close();
  }
});
