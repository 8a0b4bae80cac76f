import convict from 'convict';
import ms from 'ms';

/** A decimal number and ms's unit names ("1.5m", "45 s", "2 minutes"); the unit alone goes to ms. */
const DURATION = /^(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]+)?$/;

/**
 * Parses "10s", "200ms", "5m" or a number of milliseconds; NaN when unparsable
 * or not a whole number of milliseconds ("0.5ms"). The decimal is scaled exactly:
 * ms() multiplies in floating point, so it read "2.01s" as 2009.9999999999998 and
 * "4.35h" likewise, and the node refused them while the chart (exact decimals) took them.
 */
export function parseDuration(value: unknown): number {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : NaN;
  if (typeof value !== 'string') return NaN;
  const m = DURATION.exec(value.trim());
  if (!m) return NaN;
  const unitMs = m[2] === undefined ? 1 : ms(`1${m[2]}` as ms.StringValue);
  if (typeof unitMs !== 'number' || !Number.isSafeInteger(unitMs) || unitMs <= 0) return NaN;
  const [whole = '', fraction = ''] = m[1]!.split('.');
  const scaled = BigInt(`${whole}${fraction}` || '0') * BigInt(unitMs);
  const divisor = 10n ** BigInt(fraction.length);
  if (scaled % divisor !== 0n) return NaN;
  const result = Number(scaled / divisor);
  return Number.isSafeInteger(result) ? result : NaN;
}

/** A DNS name (labels of letters, digits and inner hyphens, an optional final dot) or an IPv4 literal. */
function isHostName(value: string): boolean {
  if (value.length > 253) return false;
  return /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*\.?$/.test(value);
}

let registered = false;

/** Registers the formats the schema uses; idempotent. */
export function registerFormats(): void {
  if (registered) return;
  registered = true;
  convict.addFormat({
    name: 'duration',
    validate(value: unknown) {
      // A file's number is not coerced: it must be a whole, non-negative number of milliseconds itself.
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Error('must be a duration such as 200ms, 10s or 5m');
    },
    coerce: (value: unknown) => parseDuration(value),
  });
  convict.addFormat({
    name: 'listen-address',
    validate(value: unknown) {
      if (typeof value !== 'string' || !/^(\[[0-9a-fA-F:.]+\]|[^\s:]+):\d{1,5}$/.test(value)) {
        throw new Error('must be host:port');
      }
      const port = Number(value.slice(value.lastIndexOf(':') + 1));
      if (port > 65535) throw new Error('port must be at most 65535');
    },
  });
  convict.addFormat({
    // A node id is written into Redis values whose parts a control character
    // separates (a running task's `run` field: store/layout.ts) and into the lease.
    name: 'node-id',
    validate(value: unknown) {
      // eslint-disable-next-line no-control-regex
      if (typeof value !== 'string' || value.length > 128 || /[\u0000-\u001f\u007f\s]/.test(value)) {
        throw new Error('must be at most 128 characters without spaces or control characters (empty: hostname plus a random suffix)');
      }
    },
  });
  convict.addFormat({
    // A name a TLS certificate is checked against (tls.peerServerName): a DNS
    // name or an IP literal, without port, scheme or wildcard; empty = unset.
    name: 'host-name',
    validate(value: unknown) {
      if (typeof value !== 'string' || (value !== '' && !isHostName(value))) {
        throw new Error('must be a host name such as zdmatch.zdmatch.svc (no port, scheme or wildcard), or empty');
      }
    },
  });
  convict.addFormat({
    name: 'positive-int',
    validate(value: unknown) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) throw new Error('must be a positive integer');
    },
    coerce: (value: unknown) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value),
  });
  convict.addFormat({
    // convict's Boolean takes any text but "false" as true: ZD_REDIS_TLS=0 or YAML `tls: off` turned TLS on.
    name: 'boolean',
    validate(value: unknown) {
      if (typeof value !== 'boolean') throw new Error('must be true or false');
    },
    coerce: (value: unknown) => {
      if (typeof value !== 'string') return value;
      const v = value.trim().toLowerCase();
      return v === 'true' ? true : v === 'false' ? false : value;
    },
  });
  convict.addFormat({
    // convict's Number reads "1.5x" as 1.5 and lets "abc" through as NaN, which every check compares false with.
    name: 'number',
    validate(value: unknown) {
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error('must be a number');
    },
    coerce: (value: unknown) =>
      typeof value === 'string' && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value) ? Number(value) : value,
  });
  convict.addFormat({
    // Replaces convict's own, which read "1.5" as 1 (parseInt): a count is written whole or refused.
    name: 'nat',
    validate(value: unknown) {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Error('must be a whole number of 0 or more');
    },
    coerce: (value: unknown) => (typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value),
  });
  convict.addFormat({
    name: 'string-list',
    validate(value: unknown) {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new Error('must be a list of strings');
    },
    coerce: (value: unknown) =>
      typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter((s) => s.length > 0) : value,
  });
}
