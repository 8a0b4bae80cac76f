/**
 * resultProblem (DESIGN §11): a StepResult or RpcResult past a bound is refused,
 * naming the field; one right at a bound is taken as it is. An empty output is
 * an output.
 */
import { resultProblem } from '../../../src/gateway/result-problem';
import { FAILURE_LIMITS as L } from '../../../src/wire';

const chars = (n: number) => 'x'.repeat(n);

it('takes a failure right at each bound, and an empty output', () => {
  expect(resultProblem('step_result', { output: new Uint8Array(0) })).toBeUndefined();
  expect(resultProblem('step_result', {
    failure: { message: chars(L.messageChars), type: chars(L.typeChars), retry_after_ms: L.retryAfterMs },
  })).toBeUndefined();
  expect(resultProblem('rpc_result', { failure: {} })).toBeUndefined();
});

it.each<[string, { message?: string; type?: string; retry_after_ms?: number }, string]>([
  ['message', { message: chars(L.messageChars + 1) }, `rpc_result.failure.message: ${L.messageChars + 1} characters; the limit is ${L.messageChars}`],
  ['type', { type: chars(L.typeChars + 1) }, `rpc_result.failure.type: ${L.typeChars + 1} characters; the limit is ${L.typeChars}`],
  ['retry hint', { retry_after_ms: L.retryAfterMs + 1 }, `rpc_result.failure.retry_after_ms: ${L.retryAfterMs + 1} exceeds ${L.retryAfterMs} (365 days)`],
])('refuses a failure %s one past its bound, naming the field of the frame', (_name, failure, problem) => {
  expect(resultProblem('rpc_result', { failure })).toBe(problem);
});

it('refuses a result with neither output nor failure', () => {
  expect(resultProblem('rpc_result', { output: null, failure: null })).toBe('rpc_result.result: holds neither output nor failure');
});
