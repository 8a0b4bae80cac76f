/**
 * How much one batch answer (FetchAndLock, ConsumeOutcomes) may carry. gRPC
 * clients refuse a message over 4 MiB unless told otherwise (grpc-js,
 * grpc-go and grpc-java alike), and a batch of entries at
 * limits.maxPayloadBytes each passes that at a handful: an answer the client
 * cannot read loses the whole batch (a fetch's locks lapse unseen, a
 * consumer's outcomes come back as the same unreadable batch). So a batch
 * stops short of the limit, and always holds its first entry.
 */
export const RESPONSE_BYTES_MAX = 4 * 1024 * 1024 - 256 * 1024;
/** An entry's wire size beyond its payload (ids, names, times), generously. */
export const ENTRY_OVERHEAD_BYTES = 2048;

/** The leading entries that fit in `max` bytes (at least one), and the rest. */
export function splitAtBytes<T>(items: readonly T[], payloadBytes: (t: T) => number, max = RESPONSE_BYTES_MAX): [T[], T[]] {
  let used = 0;
  for (let i = 0; i < items.length; i++) {
    used += payloadBytes(items[i]!) + ENTRY_OVERHEAD_BYTES;
    if (used > max && i > 0) return [items.slice(0, i), items.slice(i)];
  }
  return [items.slice(), []];
}
