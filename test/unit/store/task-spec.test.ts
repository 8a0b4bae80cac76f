import { decodeSpec, encodeSpec, SPEC_FIELDS, type SpecValues } from '../../../src/store/task-spec';

const values: SpecValues = {
  tenant: 'münchen', flowId: 'fluß-7', flowType: 'order', stepType: 'charge', stepExecutionId: 'ß€-1',
  flowDeadline: 1796139134999, maxAttempts: 5, initialInterval: 1000, backoffCoefficient: 2.5, maxInterval: 60000,
  nonRetryable: ['Fatal', 'Bad input'], methodTimeout: 30000, heartbeatTimeout: 5000, stickyWorkerId: 'app-😀',
};

describe('task spec', () => {
  it('reads back every value it was written with, multi-byte characters next to the separators included', () => {
    const spec = decodeSpec(Buffer.from(encodeSpec(values, 1796139134521)));
    expect(spec).toEqual({
      methodTimeout: '30000', hbTimeout: '5000', deadline: '1796139134999', enqueuedAt: '1796139134521',
      tenant: 'münchen', flowId: 'fluß-7', flowType: 'order', stepType: 'charge', seid: 'ß€-1', maxAttempts: '5',
      initialInterval: '1000', backoffCoefficient: '2.5', maxInterval: '60000', nonRetryable: 'Fatal\x1fBad input',
      sticky: 'app-😀',
    });
  });

  it('names the fields in SPEC_FIELDS order, the layout the scripts read', () => {
    expect(Object.keys(decodeSpec(Buffer.from(encodeSpec(values, 1))))).toEqual([...SPEC_FIELDS]);
  });

  it('keeps empty values empty', () => {
    const spec = decodeSpec(Buffer.from(encodeSpec({ ...values, nonRetryable: [], stickyWorkerId: '' }, 1)));
    expect(spec.nonRetryable).toBe('');
    expect(spec.sticky).toBe('');
  });

  it('gives the last value everything after the last separator it expects', () => {
    const full = encodeSpec(values, 1);
    expect(decodeSpec(Buffer.from(`${full}\x1etail`)).sticky).toBe('app-😀\x1etail');
  });

  it('names the first field a cut-off spec lacks', () => {
    const full = encodeSpec(values, 1);
    const cut = full.split('\x1e').slice(0, 6).join('\x1e'); // up to flowId
    expect(() => decodeSpec(Buffer.from(cut))).toThrow('task spec ends before flowType');
  });
});
