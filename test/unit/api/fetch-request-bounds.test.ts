/**
 * The bounds of fetch-surface requests (src/api/external-validation.ts, DESIGN §7,
 * §11.6): each is a rejection at one past it, never a clamp, naming the field the
 * way the caller spelt it; an empty value takes the default.
 */
import { bounded, lockDurationOf, parseFail, parseFetch, resultOf, taskRefOf } from '../../../src/api/external-validation';
import { loadConfig } from '../../../src/config';
import { FAILURE_LIMITS } from '../../../src/wire';

const config = loadConfig({ env: {}, overrides: {} });
const YEAR_366_MS = 366 * 86_400_000;
const INT32_MAX = 2_147_483_647;
const failure = { message: 'm', type: 't' };

it('takes an empty string (proto3 JSON of an unset 64-bit field) as omitted: the default', () => {
  expect(bounded('waitMs', '', 60_000, 20_000, 'fetch.maxWait', 'ms')).toBe(20_000);
  expect(bounded('waitMs', '0', 60_000, 20_000, 'fetch.maxWait', 'ms')).toBe(20_000);
  expect(parseFail('http', failure, 3, '').retryTimeoutMs).toBe(0);
});

it('takes retries up to 2147483647 and refuses one more, and a negative count, as out of range', () => {
  expect(parseFail('grpc', failure, INT32_MAX, 0).retries).toBe(INT32_MAX);
  expect(() => parseFail('grpc', failure, INT32_MAX + 1, 0)).toThrow(`retries: must be between 0 (terminal) and ${INT32_MAX}`);
  expect(() => parseFail('grpc', failure, -1, 0)).toThrow(`retries: must be between 0 (terminal) and ${INT32_MAX}`);
});

it('takes a retry timeout up to 366 days and refuses a millisecond more, naming the field as spelt', () => {
  expect(parseFail('http', failure, 1, YEAR_366_MS).retryTimeoutMs).toBe(YEAR_366_MS);
  expect(() => parseFail('http', failure, 1, YEAR_366_MS + 1)).toThrow(`retryTimeoutMs: ${YEAR_366_MS + 1} ms exceeds the ceiling of ${YEAR_366_MS} ms`);
  expect(() => parseFail('grpc', failure, 1, YEAR_366_MS + 1)).toThrow('retry_timeout_ms:');
});

it('takes a failure message and type at their limits and refuses one character more', () => {
  const { messageChars, typeChars } = FAILURE_LIMITS;
  expect(parseFail('grpc', { message: 'm'.repeat(messageChars), type: 't'.repeat(typeChars) }, 1, 0).message).toHaveLength(messageChars);
  expect(() => parseFail('grpc', { message: 'm'.repeat(messageChars + 1) }, 1, 0))
    .toThrow(`failure.message: is ${messageChars + 1} characters long; the limit is ${messageChars}`);
  expect(() => parseFail('grpc', { type: 't'.repeat(typeChars + 1) }, 1, 0))
    .toThrow(`failure.type: is ${typeChars + 1} characters long; the limit is ${typeChars}`);
});

it('refuses a task id over 64 characters as too long, before reading it as an id', () => {
  expect(() => taskRefOf('http', `1-${'a'.repeat(63)}`, config)).toThrow('taskId: is 65 characters long; the limit is 64');
  expect(() => taskRefOf('grpc', '1-abc', config)).toThrow('task_id: is not a zdmatch task id');
});

describe('parseFetch and resultOf', () => {
  const topic = { tenant: 'acme', flowType: 'order', stepType: 'charge' };
  const small = loadConfig({ env: {}, overrides: { 'matching.maxFlowTypes': 2, 'limits.maxPayloadBytes': 8 } });

  it('takes matching.maxFlowTypes topics and refuses one more, naming the key', () => {
    expect(parseFetch('http', { workerId: 'w', topics: [topic, topic] }, small).topics).toHaveLength(2);
    expect(() => parseFetch('http', { workerId: 'w', topics: [topic, topic, topic] }, small))
      .toThrow('topics: names 3 topics; the limit is 2 (matching.maxFlowTypes)');
  });

  it('names topics that are no array, and a topic that is an array, as the wrong shape', () => {
    expect(() => parseFetch('http', { workerId: 'w', topics: { 0: topic } }, small)).toThrow('topics: must be an array of topics');
    expect(() => parseFetch('http', { workerId: 'w', topics: [['acme', 'order', 'charge']] }, small)).toThrow('topics[0]: must be an object');
  });

  it('takes a null workerId as missing, not as the wrong type', () => {
    expect(() => parseFetch('http', { workerId: null, topics: [topic] }, small)).toThrow('workerId: is required');
  });

  it('takes a 64-bit field as a decimal string as it takes the number (docs/fetch.md "HTTP/JSON")', () => {
    const asText = parseFetch('http', { workerId: 'w', topics: [topic], lockDurationMs: '45000', waitMs: '1500' }, config);
    expect([asText.lockMs, asText.waitMs]).toEqual([45_000, 1500]);
    expect(parseFail('http', failure, 2, '30000').retryTimeoutMs).toBe(30_000);
    expect(() => parseFetch('http', { workerId: 'w', topics: [topic], lockDurationMs: '600001' }, config))
      .toThrow('lockDurationMs: 600001 ms exceeds the ceiling of 600000 ms (fetch.maxLockDuration)');
  });

  it('refuses a count written with trailing text, and shows a long decimal string as sent', () => {
    expect(() => bounded('maxTasks', '5x', 100, 10, 'fetch.maxMaxTasks', '')).toThrow('maxTasks: must be a non-negative whole number');
    expect(() => bounded('waitMs', '18446744073709551615', 60_000, 20_000, 'fetch.maxWait', 'ms'))
      .toThrow('waitMs: 18446744073709551615 ms exceeds the ceiling of 60000 ms (fetch.maxWait)');
  });

  it('takes lockDurationMs, waitMs and maxTasks at their ceilings exactly: only one past is over', () => {
    const { maxLockDuration, maxWait, maxMaxTasks } = config.fetch;
    const r = parseFetch('grpc', { workerId: 'w', topics: [topic], lockDurationMs: maxLockDuration, waitMs: maxWait, maxTasks: maxMaxTasks }, config);
    expect([r.lockMs, r.waitMs, r.maxTasks]).toEqual([maxLockDuration, maxWait, maxMaxTasks]);
    expect(lockDurationOf('http', maxLockDuration, config)).toBe(maxLockDuration);
    expect(() => lockDurationOf('http', maxLockDuration + 1, config))
      .toThrow(`lockDurationMs: ${maxLockDuration + 1} ms exceeds the ceiling of ${maxLockDuration} ms (fetch.maxLockDuration)`);
  });

  it('takes a result of limits.maxPayloadBytes and refuses one byte more', () => {
    expect(resultOf('http', Buffer.alloc(8), small)).toHaveLength(8);
    expect(() => resultOf('grpc', Buffer.alloc(9), small)).toThrow('result: is 9 bytes; the limit is 8 (limits.maxPayloadBytes)');
  });
});
