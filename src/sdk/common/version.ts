import { Metadata } from 'nice-grpc';

/** Sent in Register.sdk_name / sdk_version; keep in step with package.json. */
export const SDK_NAME = 'zdmatch-ts';
export const SDK_VERSION = '0.1.0';

/**
 * The metadata header that carries the caller's protocol version on every
 * Client call and on every worker stream (Connect). A server that does not
 * support the version fails the call with FAILED_PRECONDITION
 * (`ZD_PROTOCOL_MISMATCH`, naming both versions) before it runs anything.
 * The server reads the same name (src/api/protocol-middleware.ts).
 */
export const PROTOCOL_VERSION_HEADER = 'zd-protocol-version';

/** Adds the protocol version header to call metadata (returned for chaining). */
export function withProtocolVersion(metadata: Metadata, version: number): Metadata {
  metadata.set(PROTOCOL_VERSION_HEADER, String(version));
  return metadata;
}
