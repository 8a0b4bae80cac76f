import type { FailureInfo } from './types';

/** The RPC reached a worker and its handler failed; the fields are the worker's Failure. */
export class RpcFailedError extends Error {
  override name = 'RpcFailedError';
  readonly type: string;
  readonly nonRetryable: boolean;
  readonly retryAfterMs: number;

  constructor(failure: FailureInfo, readonly appWorkerId: string) {
    super(failure.message || 'the rpc handler failed');
    this.type = failure.type;
    this.nonRetryable = failure.nonRetryable;
    this.retryAfterMs = failure.retryAfterMs;
  }
}
