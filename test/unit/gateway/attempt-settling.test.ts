/**
 * AttemptSettling: a store call that ends an attempt no slot holds runs again in
 * the background until Redis answers (nothing else would end that attempt while
 * the node lives), and stops once the node stops. While such a call is on its way
 * or retried, its attempt's start nonce is reported, so the attempt audit does not
 * take that attempt for one whose end was lost; once it lands, it is not.
 */
import { AttemptSettling } from '../../../src/gateway/attempt-settling';
import { silentLogger } from '../../../src/util/logger';
import { sleep, waitFor } from '../../helpers/wait';

test('a call that lands at once leaves no nonce in transit', async () => {
  const s = new AttemptSettling(silentLogger);
  let seen: string[] = [];
  await s.settleNowOrLater('end', async () => void (seen = [...s.nonces()]), 'n1');
  expect(seen).toEqual(['n1']);
  expect([...s.nonces()]).toEqual([]);
});

test('a failed call runs again until it lands, its nonce in transit until then', async () => {
  const s = new AttemptSettling(silentLogger);
  let calls = 0;
  await s.settleNowOrLater('end', async () => {
    if (++calls < 3) throw new Error('redis down');
  }, 'n1');
  expect([...s.nonces()]).toEqual(['n1']);
  await waitFor(() => calls === 3 && [...s.nonces()].length === 0, { timeoutMs: 20_000 });
});

test('once the node stops, a call still failing runs at most once more and its nonce drops', async () => {
  const s = new AttemptSettling(silentLogger);
  let calls = 0;
  await s.settleNowOrLater('end', async () => {
    calls++;
    throw new Error('redis down');
  }, 'n1');
  await waitFor(() => calls >= 2, { timeoutMs: 20_000 });
  s.stop();
  const atStop = calls;
  await waitFor(() => [...s.nonces()].length === 0, { timeoutMs: 20_000 });
  await sleep(3_000);
  expect(calls).toBeLessThanOrEqual(atStop + 1);
});
