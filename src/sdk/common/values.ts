/** Small value conversions shared by the worker and client SDKs. */

/** Payloads users hand in: bytes, or a string sent as UTF-8. */
export type Payload = Uint8Array | Buffer | string;

export function toBytes(value: Payload | null | undefined): Uint8Array {
  if (value === undefined || value === null) return new Uint8Array(0);
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  return value;
}

/** Decoded `bytes` fields as a Buffer that shares memory with the message. */
export function toBuffer(value: Uint8Array | null | undefined): Buffer {
  if (!value) return Buffer.alloc(0);
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

/**
 * Decoded 64-bit fields are typed `number`, but protobufjs yields a Long when
 * the `long` package is installed; accept both.
 */
export function toNum(value: unknown): number {
  if (typeof value === 'number') return value;
  if (value && typeof value === 'object' && 'toNumber' in value && typeof value.toNumber === 'function') {
    return Number(value.toNumber());
  }
  if (typeof value === 'string' || typeof value === 'bigint') return Number(value);
  return 0;
}

/** A Date or epoch-ms number as epoch ms; undefined → 0 ("not set" on the wire). */
export function toEpochMs(value: Date | number | undefined): number {
  if (value === undefined) return 0;
  return value instanceof Date ? value.getTime() : value;
}

/** Epoch ms from the wire as a Date; 0 ("not set") → undefined. */
export function fromEpochMs(value: unknown): Date | undefined {
  const ms = toNum(value);
  return ms > 0 ? new Date(ms) : undefined;
}
