/**
 * CI smoke of `zdmatch bench`: a tiny --local throughput run must finish and
 * print the report fields. Not a timed test: no figure is checked.
 */
import { execFile } from 'node:child_process';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';

test('zdmatch bench --local --mode throughput --tasks 200 --json prints the report', async () => {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI_MAIN, 'bench', '--local', '--mode', 'throughput', '--tasks', '200', '--warmup', '50', '--json'],
      { cwd: REPO_ROOT, timeout: 18_000 },
      (err, out, errOut) => (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out)),
    );
  });
  const r = JSON.parse(stdout.trim().split('\n').pop()!);
  expect(r).toMatchObject({ system: 'zdmatch', mode: 'throughput', completed: 200, expected: 200, timedOut: false });
  expect(r.tasksPerSec).toBeGreaterThan(0);
  for (const k of ['submitToStart', 'enqueueToStart', 'dispatch', 'enqueueToOutcome']) {
    expect(r.latencyMs[k]).toEqual(expect.objectContaining({ n: expect.any(Number), p50: expect.any(Number), p99: expect.any(Number), max: expect.any(Number) }));
  }
  expect(r.redis).toEqual(expect.objectContaining({
    commandsPerTask: expect.any(Number), scriptCallsPerTask: expect.any(Number), cpuUsecPerTask: expect.any(Number),
  }));
  expect(r.redis.scriptCallsPerTask).toBeGreaterThan(0);
  expect(typeof r.cpuUsecPerTask.node).toBe('number');
}, 20_000);
