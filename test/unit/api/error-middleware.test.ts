/**
 * The one place a handler's error becomes a status (src/api/error-middleware.ts):
 * catalogued errors and aborts pass as they are, Redis out of reach becomes
 * ZD_STORE_UNAVAILABLE at WARN, anything else INTERNAL at ERROR with its stack,
 * and a request that did not decode never reaches the handler.
 */
import { AbortError } from 'abort-controller-x';
import { ServerError, Status } from 'nice-grpc';
import { errorMiddleware } from '../../../src/api/error-middleware';
import { DECODE_ERROR } from '../../../src/wire/adapter';
import { captureLogs } from '../../helpers/logs';

type Line = { level: number; msg: string; method?: string; err?: string };
const PATH = '/zdmatch.v1.MatchingService/Enqueue';

function run(handler: () => unknown, request: object = {}, requestStream = false) {
  const { logger, lines } = captureLogs<Line>();
  let ran = false;
  const call = {
    method: { path: PATH }, requestStream, responseStream: false, request,
    // eslint-disable-next-line require-yield
    next: async function* () {
      ran = true;
      return handler();
    },
  };
  const result = errorMiddleware(logger)(call as never, {} as never).next().then((r) => r.value);
  return { result, lines, ran: () => ran };
}

it('passes a handler\'s answer and its catalogued errors and aborts through as they are, logging nothing', async () => {
  expect(await run(() => 'ok').result).toBe('ok');
  const catalogued = new ServerError(Status.NOT_FOUND, 'ZD_NOT_FOUND: no such task');
  const c = run(() => { throw catalogued; });
  await expect(c.result).rejects.toBe(catalogued);
  const abort = new AbortError();
  const a = run(() => { throw abort; });
  await expect(a.result).rejects.toBe(abort);
  expect([...c.lines, ...a.lines]).toEqual([]);
});

it('answers Redis out of reach as ZD_STORE_UNAVAILABLE, at WARN naming the method', async () => {
  const r = run(() => { throw new Error('Connection is closed.'); });
  await expect(r.result).rejects.toMatchObject({ code: Status.UNAVAILABLE, details: expect.stringContaining('ZD_STORE_UNAVAILABLE') });
  expect(r.lines).toEqual([expect.objectContaining({ level: 40, method: PATH, err: 'Connection is closed.' })]);
});

it('answers anything else as INTERNAL, logging its stack at ERROR', async () => {
  const r = run(() => { throw new TypeError('x is undefined'); });
  await expect(r.result).rejects.toMatchObject({ code: Status.INTERNAL, details: 'ZD_INTERNAL: internal error' });
  expect(r.lines).toEqual([expect.objectContaining({ level: 50, method: PATH, err: expect.stringMatching(/^TypeError: x is undefined\n\s+at /) })]);
  const s = run(() => { throw 'a string'; }); // eslint-disable-line no-throw-literal
  await expect(s.result).rejects.toMatchObject({ code: Status.INTERNAL });
  expect(s.lines).toEqual([expect.objectContaining({ level: 50, err: 'a string' })]);
});

it('refuses a request that did not decode before the handler runs, and leaves a stream\'s requests to the handler', async () => {
  const bad = { [DECODE_ERROR]: 'index out of range' };
  const r = run(() => 'ok', bad);
  await expect(r.result).rejects.toMatchObject({ code: Status.INVALID_ARGUMENT, details: expect.stringContaining('index out of range') });
  expect(r.ran()).toBe(false);
  const s = run(() => 'ok', bad, true);
  expect(await s.result).toBe('ok');
});
