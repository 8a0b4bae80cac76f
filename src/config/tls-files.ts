/**
 * The tls.* files as the listeners use them, checked the same way at boot (config/load.ts) and on
 * every reload (node/tls-certificates.ts). Readable is not enough: a key given as the certificate, or
 * a key of another certificate, failed with OpenSSL's words and no key named, and a tls.ca holding no
 * certificate trusts no peer at all.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import tls from 'node:tls';

export interface TlsPaths { cert: string; key: string; ca: string }
export interface TlsPem { cert: Buffer; key: Buffer; ca?: Buffer }

/** Reads the files (`ca` only when set); throws a system error naming none of them. */
export function readTlsFiles(p: TlsPaths): TlsPem {
  return { cert: fs.readFileSync(p.cert), key: fs.readFileSync(p.key), ...(p.ca ? { ca: fs.readFileSync(p.ca) } : {}) };
}

/** What is wrong with the files' contents, naming the key and the file; undefined when the listeners can serve them. */
export function tlsFilesProblem(p: TlsPaths, pem: TlsPem): { key: string; reason: string } | undefined {
  const why = (err: unknown) => (err as Error).message.replace(/^error:[0-9A-F]+:/, '');
  try {
    tls.createSecureContext({ cert: pem.cert });
  } catch (err) {
    return { key: 'tls.cert', reason: `${p.cert} is not a PEM certificate (chain): ${why(err)}` };
  }
  try {
    tls.createSecureContext({ key: pem.key });
  } catch (err) {
    return { key: 'tls.key', reason: `${p.key} is not an unencrypted PEM private key: ${why(err)}` };
  }
  try {
    tls.createSecureContext({ cert: pem.cert, key: pem.key });
  } catch (err) {
    return { key: 'tls.key', reason: `${p.key} is not the key of the certificate in tls.cert: ${why(err)}` };
  }
  if (!pem.ca) return undefined;
  const ca = caBundleProblem(p.ca, pem.ca);
  return ca ? { key: 'tls.ca', reason: ca } : undefined;
}

/** What is wrong with a CA bundle's contents, naming the file; undefined when it holds certificates only that parse. */
export function caBundleProblem(file: string, pem: Buffer): string | undefined {
  // Node takes a CA file without a certificate in it (a key, any text) as trusting nothing.
  const blocks = pem.toString('latin1').match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return `${file} holds no PEM certificate`;
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (err) {
      return `certificate ${i + 1} of ${file} does not parse: ${(err as Error).message.replace(/^error:[0-9A-F]+:/, '')}`;
    }
  }
  return undefined;
}
