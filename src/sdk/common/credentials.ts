import { Metadata } from 'nice-grpc';

/**
 * A bearer token, or a function returning one (called each time a stream
 * opens or a call starts, so rotated tokens are picked up).
 */
export type Credential = string | (() => string | Promise<string>);

/** Call metadata carrying `authorization: Bearer <token>` when a credential is set. */
export async function authMetadata(credential: Credential | undefined): Promise<Metadata> {
  const metadata = new Metadata();
  if (credential === undefined) return metadata;
  const token = typeof credential === 'function' ? await credential() : credential;
  if (token) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}
