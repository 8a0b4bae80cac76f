/**
 * The clients' reconnectBackoff option (not re-exported: internal): the
 * connection's redial backoff (createSdkChannel), checked as the Worker's is.
 */
import { backoffProblem, type BackoffOptions } from './backoff';

/** The option as given (`{}` for the defaults); a TypeError naming the field when it is no backoff. */
export function checkedReconnectBackoff(what: string, opts: BackoffOptions | undefined): BackoffOptions {
  const problem = backoffProblem(opts ?? {});
  if (problem) throw new TypeError(`${what} option reconnectBackoff.${problem.field}: ${problem.reason}`);
  return opts ?? {};
}
