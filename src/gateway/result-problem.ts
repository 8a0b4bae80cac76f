import { FAILURE_LIMITS, type pb } from '../wire';

/**
 * What is wrong with a StepResult or RpcResult, naming the field; undefined when
 * nothing is (DESIGN §11: bounds are refused, never cut short).
 */
export function resultProblem(frame: 'step_result' | 'rpc_result', msg: { output?: Uint8Array | null; failure?: pb.IFailure | null }): string | undefined {
  if (msg.output == null && msg.failure == null) return `${frame}.result: holds neither output nor failure`;
  const f = msg.failure;
  if (!f) return undefined;
  const L = FAILURE_LIMITS;
  if ((f.message ?? '').length > L.messageChars) return `${frame}.failure.message: ${f.message!.length} characters; the limit is ${L.messageChars}`;
  if ((f.type ?? '').length > L.typeChars) return `${frame}.failure.type: ${f.type!.length} characters; the limit is ${L.typeChars}`;
  if (Number(f.retry_after_ms ?? 0) > L.retryAfterMs) return `${frame}.failure.retry_after_ms: ${String(f.retry_after_ms)} exceeds ${L.retryAfterMs} (365 days)`;
  return undefined;
}
