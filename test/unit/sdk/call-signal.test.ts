/**
 * CallSignal, the AbortSignal of one unary SDK call: a Node.js timer holds at
 * most 2^31 - 1 ms (MAX_TIMER_MS), and a longer one fires after 1 ms, so it
 * never arms one: no timeout (0 or none) arms no timer, and a timeout past
 * MAX_TIMER_MS is a bug of its caller, refused rather than fired at once.
 */
import { CallSignal } from '../../../src/sdk/common/call-signal';
import { MAX_TIMER_MS } from '../../../src/sdk/common';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('CallSignal', () => {
  it('aborts at its timeout, and says so', async () => {
    const call = new CallSignal(20, []);
    await sleep(60);
    expect(call.signal.aborted).toBe(true);
    expect(call.timedOut).toBe(true);
    call.dispose();
  });

  it.each([0, undefined])('arms no timer for a timeout of %p', async (timeoutMs) => {
    const spy = jest.spyOn(global, 'setTimeout');
    let call: CallSignal;
    try {
      call = new CallSignal(timeoutMs, []);
    } finally {
      spy.mockRestore();
    }
    expect(spy).not.toHaveBeenCalled();
    await sleep(20);
    expect(call.signal.aborted).toBe(false);
    call.dispose();
  });

  it('holds a timeout of MAX_TIMER_MS', async () => {
    const call = new CallSignal(MAX_TIMER_MS, []);
    await sleep(20);
    expect(call.signal.aborted).toBe(false);
    call.dispose();
  });

  it.each([MAX_TIMER_MS + 1, Infinity, NaN, -1])('refuses a timeout of %p instead of firing after 1 ms', (timeoutMs) => {
    expect(() => new CallSignal(timeoutMs, [])).toThrow(RangeError);
  });

  it('ends with the first source that aborts', () => {
    const ac = new AbortController();
    const call = new CallSignal(undefined, [ac.signal, undefined]);
    ac.abort(new Error('gone'));
    expect(call.cause).toBe(ac.signal);
    expect(call.signal.reason).toEqual(new Error('gone'));
    call.dispose();
  });
  it('ends at once, by that source, when a source is already aborted', () => {
    const ac = new AbortController();
    ac.abort(new Error('before'));
    const call = new CallSignal(1000, [ac.signal]);
    expect(call.signal.aborted).toBe(true);
    expect(call.cause).toBe(ac.signal);
    expect(call.timedOut).toBe(false);
    call.dispose();
  });

  it('keeps what ended it first: a timeout after a source aborted does not make it timed out', async () => {
    // The client names the error by it: closed, not "did not finish within".
    const ac = new AbortController();
    const call = new CallSignal(20, [ac.signal]);
    ac.abort(new Error('closed'));
    await sleep(60);
    expect(call.cause).toBe(ac.signal);
    expect(call.timedOut).toBe(false);
    call.dispose();
  });

  it('listens to its sources no more once disposed', () => {
    const ac = new AbortController();
    const call = new CallSignal(undefined, [ac.signal]);
    call.dispose();
    ac.abort(new Error('later'));
    expect(call.signal.aborted).toBe(false);
    expect(call.cause).toBeUndefined();
  });
});
