import { within } from '../../../src/util/within';

it("answers with the promise's value when it settles in time", async () => {
  await expect(within(Promise.resolve(7), 5000)).resolves.toBe(7);
  await expect(within(Promise.reject(new Error('no')), 5000)).rejects.toThrow('no');
});

it('answers undefined once the time is up, without waiting for a promise that never settles', async () => {
  jest.useFakeTimers();
  try {
    const answer = within(new Promise<number>(() => undefined), 1000);
    let settled = false;
    void answer.then(() => (settled = true));
    await jest.advanceTimersByTimeAsync(900);
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(200);
    expect(settled).toBe(true);
    await expect(answer).resolves.toBeUndefined();
    expect(jest.getTimerCount()).toBe(0);
  } finally {
    jest.useRealTimers();
  }
});

it('clears its timer once the promise settles first', async () => {
  jest.useFakeTimers();
  try {
    await within(Promise.resolve('x'), 60_000);
    expect(jest.getTimerCount()).toBe(0);
  } finally {
    jest.useRealTimers();
  }
});
