/**
 * How `zdmatch enqueue --file` cuts the file into calls (README "From a
 * shell"): `--batch` Steps at most, a batch under 64 KiB (a larger Step goes
 * alone), and `--inflight` calls at once. Read off the calls a recording
 * client receives; the node's side of a load is in
 * test/integration/cli-enqueue-file.test.ts.
 */
import { Readable } from 'node:stream';
import { loadSteps } from '../../src/cli/enqueue-file';
import type { Client, StepSpec } from '../../src/sdk/client';

const KIB = 1024;

function recordingClient(holdMs = 0) {
  const calls: StepSpec[][] = [];
  let open = 0;
  let mostOpen = 0;
  const client = {
    async enqueueSteps(steps: StepSpec[]) {
      calls.push(steps);
      open++;
      mostOpen = Math.max(mostOpen, open);
      await new Promise((r) => setTimeout(r, holdMs));
      open--;
      return steps.map(() => ({ created: true }));
    },
  } as unknown as Client;
  return { client, calls, mostOpen: () => mostOpen };
}

const line = (id: string, inputBytes = 0) => JSON.stringify({
  tenant: 'acme', flowId: `f-${id}`, flowType: 'order', stepType: 'charge', stepExecutionId: id, input: 'x'.repeat(inputBytes),
});

const file = (lines: string[]) => Readable.from(lines.join('\n'));
const inputBytes = (steps: StepSpec[]) => steps.reduce((n, s) => n + (s.input?.length ?? 0), 0);

it('sends --batch Steps a call', async () => {
  const { client, calls } = recordingClient();
  const summary = await loadSteps(client, file(Array.from({ length: 25 }, (_, i) => line(`s${i}`))), { batch: 10, inflight: 4, retries: 0, onFailure: () => undefined });
  expect(summary).toMatchObject({ lines: 25, created: 25, failed: 0 });
  expect(calls.map((c) => c.length)).toEqual([10, 10, 5]);
});

it('keeps a batch under 64 KiB, and sends a larger Step alone', async () => {
  const { client, calls } = recordingClient();
  const lines = [...Array.from({ length: 7 }, (_, i) => line(`m${i}`, 20 * KIB)), line('big', 100 * KIB), line('small-after')];
  const summary = await loadSteps(client, file(lines), { batch: 100, inflight: 1, retries: 0, onFailure: () => undefined });
  expect(summary).toMatchObject({ created: 9, failed: 0 });
  const multi = calls.filter((c) => c.length > 1);
  expect(multi.length).toBeGreaterThan(0); // Steps of 20 KiB still share calls
  expect(multi.filter((c) => inputBytes(c) >= 64 * KIB).map((c) => inputBytes(c))).toEqual([]);
  expect(calls.find((c) => c.some((s) => s.stepExecutionId === 'big'))!.map((s) => s.stepExecutionId)).toEqual(['big']);
});

it('has at most --inflight calls out at once, and uses them', async () => {
  const { client, calls, mostOpen } = recordingClient(20);
  await loadSteps(client, file(Array.from({ length: 12 }, (_, i) => line(`p${i}`))), { batch: 1, inflight: 3, retries: 0, onFailure: () => undefined });
  expect(calls).toHaveLength(12);
  expect(mostOpen()).toBe(3);
});
