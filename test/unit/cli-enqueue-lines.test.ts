/**
 * `zdmatch enqueue --file`: how one NDJSON line becomes a Step, and the field a
 * bad line is reported under. A line refused here fails alone, before its batch
 * is sent; one let through would be dropped in part or refused with its batch.
 */
import { lineField, parseLine, summaryTable } from '../../src/cli/enqueue-file';

const base = { tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 's1' };
const line = (extra: Record<string, unknown>) => JSON.stringify({ ...base, ...extra });
const refusal = (text: string): { field: string; message: string } => {
  try {
    parseLine(text);
  } catch (err) {
    return { field: (err as { field: string }).field, message: (err as Error).message };
  }
  throw new Error(`accepted: ${text}`);
};

it.each([
  ['input and inputBase64 together', { input: 'a', inputBase64: 'YQ==' }, 'inputBase64', /not both/],
  ['inputBase64 that is not base64', { inputBase64: 'not base64!' }, 'inputBase64', /must be a base64 string/],
  ['input that is not a string', { input: { amount: 5 } }, 'input', /must be a string \(inputBase64 for bytes\)/],
  ['a retryPolicy that is not an object', { retryPolicy: 3 }, 'retryPolicy', /must be an object, got 3/],
  ['a misspelt retryPolicy field', { retryPolicy: { maxAttemps: 3 } }, 'retryPolicy.maxAttemps', /is not a field of a retry policy/],
  ['a readyAt that is no date', { readyAt: 'tomorrow' }, 'readyAt', /must be epoch ms or an ISO 8601 date, got "tomorrow"/],
  ['a flowDeadline that is no date', { flowDeadline: true }, 'flowDeadline', /must be epoch ms or an ISO 8601 date/],
  ['an empty tenant', { tenant: '' }, 'tenant', /must be a non-empty string, got ""/],
  ['a flowId that is a number', { flowId: 7 }, 'flowId', /must be a non-empty string, got 7/],
  ['a negative methodTimeoutMs', { methodTimeoutMs: -1 }, 'methodTimeoutMs', /./],
])('refuses %s, naming the field', (_label, extra, field, message) => {
  const r = refusal(line(extra));
  expect(r.field).toBe(field);
  expect(r.message).toMatch(message);
});

it('takes input as UTF-8, inputBase64 as bytes, and dates as ISO text or epoch ms', () => {
  const deadline = Date.parse('2030-01-02T03:04:05Z');
  expect(parseLine(line({ input: 'héllo', readyAt: 1_700_000_000_000, flowDeadline: '2030-01-02T03:04:05Z' }))).toEqual({
    ...base, input: Buffer.from('héllo', 'utf8'), readyAt: 1_700_000_000_000, flowDeadline: deadline,
  });
  expect(parseLine(line({ inputBase64: Buffer.from([0, 255, 1]).toString('base64') })).input).toEqual(Buffer.from([0, 255, 1]));
  const full = parseLine(line({ methodTimeoutMs: 5000, heartbeatTimeoutMs: 2000, stickyWorkerId: 'w1', retryPolicy: { maxAttempts: 3 } }));
  expect(full).toMatchObject({ methodTimeoutMs: 5000, heartbeatTimeoutMs: 2000, stickyWorkerId: 'w1', retryPolicy: { maxAttempts: 3 } });
});

it("names a node's wire field as the line does", () => {
  expect(lineField('retry_policy.max_attempts')).toBe('retryPolicy.maxAttempts');
  expect(lineField('ready_at_ms')).toBe('readyAt');
  expect(lineField('flow_deadline_ms')).toBe('flowDeadline');
  expect(lineField('method_timeout_ms')).toBe('methodTimeoutMs');
});

it('the summary tells lines not sent and where the load stopped only when it stopped', () => {
  const done = { lines: 3, created: 3, alreadyExisted: 0, createdOrExisted: 0, failed: 0, notSent: 0, elapsedSec: 0.5, linesPerSec: 6 };
  const rows = (t: string) => t.split('\n').map((l) => l.split('│').map((c) => c.trim()).filter(Boolean)).filter((r) => r.length === 2);
  expect(rows(summaryTable(done)).map(([k]) => k)).toEqual(['lines', 'created', 'already existed', 'failed', 'elapsed', 'lines/s']);
  const stopped = { ...done, lines: 10, created: 2, failed: 7, notSent: 1, stoppedAtLine: 3 };
  expect(rows(summaryTable(stopped))).toEqual(expect.arrayContaining([['failed', '7'], ['not sent (stopped)', '1'], ['stopped at line', '3'], ['elapsed', '0.5s']]));
});
