/** The check of the credential option (not re-exported: internal). */
import { kindOf } from './kind-of';

/** What a bearer token may hold: printable ASCII, no spaces, as an HTTP/2 header value carries it. */
export const TOKEN = /^[\x21-\x7e]{1,4096}$/;

/**
 * The credential as given; a TypeError `${what} option credential: …` when it can never
 * resolve to a token. Resolving it fails every stream and call before anything is sent,
 * and a Worker retries that for ever, so it is refused when the Worker or client is built.
 * Only what is wrong for good is refused: a file or function is read later, each time.
 */
export function checkedCredential<T>(what: string, credential: T): T {
  const c: unknown = credential;
  if (c === undefined || c === '' || typeof c === 'function') return credential;
  if (typeof c === 'string') {
    if (TOKEN.test(c)) return credential;
    // fs.readFileSync(tokenFile, 'utf8') keeps the file's newline; { file } trims it.
    throw new TypeError(`${what} option credential: the token must be printable ASCII without spaces (trim one read from a file, or pass { file })`);
  }
  const file = typeof c === 'object' && c !== null ? (c as { file?: unknown }).file : undefined;
  if (typeof file === 'string' && file !== '') return credential;
  throw new TypeError(`${what} option credential: must be a token string, { file } or a function, got ${kindOf(c)}`);
}
