/**
 * The node's bound on waiting calls (limits.maxLongPolls): a call's release
 * frees its own place once, however often it runs, and a call that does not
 * wait, or waits 1 ms, takes no place.
 */
import { LongPollGate } from '../../../src/api/long-polls';

it('a release run twice frees one place, not the place of another waiting call', () => {
  const gate = new LongPollGate(2);
  const first = gate.enter(5000);
  gate.enter(5000);
  first();
  first();
  expect(gate.count).toBe(1);
  gate.enter(5000);
  expect(() => gate.enter(5000)).toThrow(/2 long polls in flight \(limits\.maxLongPolls = 2\)/);
});

it('a call that waits 0 or 1 ms takes no place, even at the bound', () => {
  const gate = new LongPollGate(1);
  gate.enter(5000);
  expect(() => gate.enter(0)()).not.toThrow();
  expect(() => gate.enter(1)()).not.toThrow();
  expect(gate.count).toBe(1);
  expect(() => gate.enter(2)).toThrow(/limits\.maxLongPolls/);
});

it('reads closed once the node stops, and not before', () => {
  const gate = new LongPollGate(1);
  expect(gate.closed).toBe(false);
  gate.close();
  expect(gate.closed).toBe(true);
});
