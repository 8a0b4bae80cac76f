/**
 * A gRPC listener that fails with one error an operator can act on: the
 * config key and the address. grpc-js logs its own "No address added out of
 * total N resolved" before it rejects; that line is held back while the bind
 * runs, since the error thrown here says the same with the key (every other
 * grpc-js line still goes through).
 */
import { setLogger } from '@grpc/grpc-js';
// grpc-js exports setLogger but not getLogger, which restoring needs (the version is pinned in package.json).
import { getLogger } from '@grpc/grpc-js/build/src/logging';

const NO_ADDRESS = /^No address added out of total \d+ resolved/;

/** Runs `bind` (a gRPC server's listen on `address`); a failed bind throws `config <key>: cannot listen on <address>: <why>`. */
export async function listenGrpc(key: string, address: string, bind: () => Promise<number>): Promise<number> {
  const logger = getLogger();
  setLogger(withoutNoAddressLine(logger));
  try {
    return await bind();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (!NO_ADDRESS.test(message)) throw err;
    throw new Error(`config ${key}: cannot listen on ${address}: ${bindReasons(message)}`);
  } finally {
    setLogger(logger);
  }
}

/** `logger` (its other methods and fields inherited) minus the one line. */
function withoutNoAddressLine(logger: Partial<Console>): Partial<Console> {
  const quiet = Object.create(logger) as Partial<Console>;
  quiet.error = (message?: unknown, ...rest: unknown[]) => {
    if (!(typeof message === 'string' && NO_ADDRESS.test(message))) logger.error?.call(logger, message, ...rest);
  };
  return quiet;
}

/** "... errors: [listen EADDRINUSE: address already in use 127.0.0.1:7233]" → "address already in use". */
function bindReasons(message: string): string {
  const list = /errors: \[(.*)\]$/s.exec(message)?.[1] ?? message;
  const reasons = list.split(',').map((e) => /^listen E[A-Z]+: (.+) \S+$/.exec(e.trim())?.[1] ?? e.trim());
  return [...new Set(reasons)].join('; ');
}
