/** What the task and fetch stores share about their script calls: how each is timed, and the done record's retention. */

/** Told how long each script call took (the Redis latency histogram). */
export type ObserveCall = (command: string, seconds: number) => void;

/** `call`, its time told to `observe` when there is one. */
export function timedCall<T>(observe: ObserveCall | undefined, command: string, call: Promise<T>): Promise<T> {
  if (!observe) return call;
  const t0 = process.hrtime.bigint();
  return call.finally(() => observe(command, Number(process.hrtime.bigint() - t0) / 1e9));
}

/** A done record's TTL: at least a second, whatever outcomes.retention says (PSETEX refuses 0, and a call repeated at once must find the record). */
export function doneRetention(retentionMs: number): number {
  return Math.max(1000, retentionMs);
}
