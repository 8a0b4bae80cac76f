/**
 * A request whose text fields hold bytes that are no UTF-8 is refused naming
 * every such field, so a caller fixes them all at once; any other undecodable
 * request is named as a whole, with protobufjs's words.
 */
import { decodeProblem } from '../../../src/wire/adapter';
import { MatchingServiceDefinition, pb } from '../../../src/wire';

/** The encoded request with each of `marks` (ASCII placeholders) replaced by bytes that are no UTF-8, of the same length. */
function withInvalidText(request: pb.IEnqueueStepRequest, marks: string[]): Uint8Array {
  const bytes = Buffer.from(pb.EnqueueStepRequest.encode(request).finish());
  for (const mark of marks) {
    const at = bytes.indexOf(mark);
    if (at < 0) throw new Error(`mark ${mark} not encoded`);
    bytes.fill(0xff, at, at + mark.length);
  }
  return bytes;
}

const step = { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1' };
const decode = (bytes: Uint8Array) => MatchingServiceDefinition.enqueueStep.requestDeserialize(bytes);

it('names every text field that is no UTF-8, in message order', () => {
  const bytes = withInvalidText({ step: { ...step, tenant: 'TTTT', step_type: 'SSSS' } }, ['TTTT', 'SSSS']);
  expect(decodeProblem(decode(bytes))).toEqual({ field: 'step.tenant, step.step_type', reason: 'is not valid UTF-8 text' });
});

it('names the one text field that is no UTF-8', () => {
  const bytes = withInvalidText({ step: { ...step, flow_id: 'FFFF' } }, ['FFFF']);
  expect(decodeProblem(decode(bytes))).toEqual({ field: 'step.flow_id', reason: 'is not valid UTF-8 text' });
});

it('names the whole request when it is no protobuf message at all', () => {
  expect(decodeProblem(decode(Uint8Array.from([0x0a, 0x7f])))).toEqual({ field: 'request', reason: expect.stringMatching(/^is not a valid protobuf message \(.+\)$/) });
  expect(decodeProblem(decode(pb.EnqueueStepRequest.encode({ step }).finish()))).toBeUndefined();
});
