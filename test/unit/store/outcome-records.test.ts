/**
 * Outcome ids as clients send them back, and done records as Redis holds them
 * (store/lua/includes/outcome.lua): what is refused before it reaches Redis,
 * and a record that ends early named rather than read as a shorter outcome.
 */
import { decodeDone, parseOutcomeId } from '../../../src/store/outcomes';

describe('an outcome id', () => {
  it('is "<partition>-<stream id>" for a partition of the store', () => {
    expect(parseOutcomeId('7-1700000000000-3', 8)).toEqual({ partition: 7, streamId: '1700000000000-3' });
    expect(parseOutcomeId('0-0-1', 1)).toEqual({ partition: 0, streamId: '0-1' });
  });

  it('is refused for a partition the store does not have, and malformed ones', () => {
    expect(parseOutcomeId('8-1-0', 8)).toBeUndefined();
    for (const id of ['', '1', '1-2', 'x-1-2', '1-2-3-4', '1-2-x', '1234567-1-0']) expect(parseOutcomeId(id, 8)).toBeUndefined();
  });

  it('is refused with a stream id part past what Redis reads, and kept at that bound', () => {
    expect(parseOutcomeId('1-18446744073709551615-18446744073709551615', 8))
      .toEqual({ partition: 1, streamId: '18446744073709551615-18446744073709551615' });
    expect(parseOutcomeId('1-18446744073709551616-0', 8)).toBeUndefined();
    expect(parseOutcomeId('1-0-18446744073709551616', 8)).toBeUndefined();
  });
});

describe('a done record', () => {
  const fields = ['COMPLETED', '3-1-0', '', 'acme', 'f1', 'order', 'charge', 's1', '1', 'w1', '', '', '0', '20', '10'];
  const record = (values: string[], output: Buffer) =>
    Buffer.concat([...values.map((v) => Buffer.concat([Buffer.from(v), Buffer.from([0xff])])), output]);

  it('gives each field up to its 0xff, and the output all that follows, 0xff bytes included', () => {
    const d = decodeDone('3-abc', record(fields, Buffer.from([0xff, 0, 0xff])));
    expect(d.taskId!.toString()).toBe('3-abc');
    expect(d.status!.toString()).toBe('COMPLETED');
    expect(d.enqueuedAt!.toString()).toBe('10');
    expect([...d.output!]).toEqual([0xff, 0, 0xff]);
  });

  it('that ends before its last field is refused, naming the task and the field', () => {
    expect(() => decodeDone('3-abc', record(fields.slice(0, 14), Buffer.alloc(0)))).toThrow('done record of 3-abc: ends before enqueuedAt');
  });
});
