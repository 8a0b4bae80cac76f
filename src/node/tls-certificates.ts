/**
 * The node's tls.* files, kept current with the disk (docs/security.md "Rotating certificates"): a
 * certificate, key or CA bundle rewritten in place (cert-manager renewing a Kubernetes Secret, which
 * swaps the folder's `..data` symlink) is read again (util/file-watch.ts), checked as at boot
 * (config/tls-files.ts), and every listener serves it to the connections that open from then on: the
 * gRPC servers through grpc-js's certificate-provider credentials (this is their provider), the
 * HTTPS server through setSecureContext, the peer mesh's dialling side through grpc-js's
 * certificate-provider channel credentials. Connections already open keep theirs.
 *
 * A set of files that does not check out (half written, a key of another certificate, no CA in the
 * bundle) is never served: the certificate in service stays. It is read again a few times over
 * TLS_SETTLE_MS first (a writer that saves the certificate and then the key leaves a mismatched pair
 * between the two); still bad then, an ERROR names the key and the file.
 */
import { X509Certificate } from 'node:crypto';
import type { experimental } from '@grpc/grpc-js';
import { readTlsFiles, tlsFilesProblem, type TlsPaths, type TlsPem } from '../config/tls-files';
import { FileWatch } from '../util/file-watch';
import type { Logger } from '../util/logger';

type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

/** The fs.watch fallback: a stat of the files this often. */
export const TLS_RELOAD_CHECK_MS = 10_000;
/** How long a set of files that does not check out is read again before it is reported. */
export const TLS_SETTLE_MS = 2_000;
/** The first delay of those reads; each next one doubles, up to what is left of TLS_SETTLE_MS. */
const SETTLE_FIRST_MS = 50;

/** The serving certificate's facts, for logs and metrics. */
export interface CertificateFacts {
  serial: string;
  /** SHA-256 fingerprint, as openssl and Node print it. */
  fingerprint256: string;
  /** When it expires, in ms since the epoch. */
  notAfterMs: number;
}

function factsOf(cert: Buffer): CertificateFacts {
  // The first certificate of the chain is the node's own.
  const x = new X509Certificate(cert);
  return { serial: x.serialNumber, fingerprint256: x.fingerprint256, notAfterMs: Date.parse(x.validTo) };
}

const sameBytes = (a: Buffer | undefined, b: Buffer | undefined): boolean => (a && b ? a.equals(b) : a === b);

export class TlsCertificates implements experimental.CertificateProvider {
  private pem: TlsPem;
  private readonly watch: FileWatch;
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();
  private readonly applied = new Set<(pem: TlsPem, facts: CertificateFacts) => void>();
  facts: CertificateFacts;
  /** Reads of the files so far, good or bad (tests wait on it). */
  generation = 0;
  /** The next read of a set that did not check out, while within TLS_SETTLE_MS of the change. */
  private settle: NodeJS.Timeout | undefined;

  /** Reads the files now; throws naming the key when they do not check out (a node does not start on them). */
  constructor(private readonly paths: TlsPaths, private readonly log: Logger, pollMs = TLS_RELOAD_CHECK_MS) {
    this.watch = new FileWatch([paths.cert, paths.key, ...(paths.ca ? [paths.ca] : [])], pollMs, () => this.reload());
    this.watch.reading();
    const pem = readTlsFiles(paths);
    const problem = tlsFilesProblem(paths, pem);
    if (problem) throw new Error(`config ${problem.key}: ${problem.reason}`);
    this.pem = pem;
    this.facts = factsOf(pem.cert);
  }

  /** The files in service now. */
  get current(): TlsPem {
    return this.pem;
  }

  /** Starts following the files. */
  start(): void {
    this.watch.start((err) => {
      this.log.warn({ err: err.message }, 'tls: cannot watch the certificate files; relying on the periodic check');
    });
  }

  stop(): void {
    this.watch.stop();
    if (this.settle) clearTimeout(this.settle);
    this.settle = undefined;
  }

  /** `fn` runs with each new set of files taken into service (not the boot's). */
  onApplied(fn: (pem: TlsPem, facts: CertificateFacts) => void): void {
    this.applied.add(fn);
  }

  /**
   * Reads the files again; a good set that differs goes into service. A bad one is left out and
   * read again until TLS_SETTLE_MS after this call, then logged.
   */
  reload(): void {
    if (this.settle) clearTimeout(this.settle);
    this.settle = undefined;
    this.read(0, SETTLE_FIRST_MS);
  }

  /** One read, `waited` ms after the change; a bad set is read again after `delay` while within TLS_SETTLE_MS. */
  private read(waited: number, delay: number): void {
    this.settle = undefined;
    this.watch.reading();
    this.generation++;
    let next: TlsPem | undefined;
    let fault: { fields: Record<string, unknown>; msg: string } | undefined;
    try {
      next = readTlsFiles(this.paths);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      fault = {
        fields: { file: e.path, err: e.code ?? e.message, serial: this.facts.serial },
        msg: `tls: cannot read ${e.path ?? 'a certificate file'}; the certificate in service stays until the files are fixed`,
      };
    }
    const problem = next && tlsFilesProblem(this.paths, next);
    if (problem) {
      fault = {
        fields: { key: problem.key, file: this.paths[problem.key.slice(4) as keyof TlsPaths], err: problem.reason, serial: this.facts.serial },
        msg: `tls: ${problem.key}: ${problem.reason}; the certificate in service stays until the files are fixed`,
      };
    }
    if (!next || fault) {
      // The rest of the set may be on its way (cert and key saved one after the other).
      if (waited >= TLS_SETTLE_MS) {
        if (fault) this.log.error(fault.fields, fault.msg);
        return;
      }
      const wait = Math.min(delay, TLS_SETTLE_MS - waited);
      this.settle = setTimeout(() => this.read(waited + wait, delay * 2), wait);
      this.settle.unref();
      return;
    }
    const was = this.pem;
    const identity = !sameBytes(was.cert, next.cert) || !sameBytes(was.key, next.key);
    const ca = !sameBytes(was.ca, next.ca);
    if (!identity && !ca) return;
    this.pem = next;
    this.facts = factsOf(next.cert);
    this.log.info(
      { serial: this.facts.serial, fingerprint256: this.facts.fingerprint256, notAfter: new Date(this.facts.notAfterMs).toISOString(), ca },
      'tls: certificate files reloaded; new connections get them',
    );
    if (identity) for (const l of this.identityListeners) l(this.identityUpdate());
    if (ca) for (const l of this.caListeners) l(this.caUpdate());
    for (const fn of this.applied) fn(next, this.facts);
  }

  private identityUpdate(): experimental.IdentityCertificateUpdate {
    return { certificate: this.pem.cert, privateKey: this.pem.key };
  }

  private caUpdate(): experimental.CaCertificateUpdate | null {
    return this.pem.ca ? { caCertificate: this.pem.ca } : null;
  }

  // grpc-js's CertificateProvider. The first answer comes on the next tick, as grpc-js's own
  // providers give it: a server's credentials add their listener before the server's watcher.
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    process.nextTick(() => this.caListeners.has(listener) && listener(this.caUpdate()));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    process.nextTick(() => this.identityListeners.has(listener) && listener(this.identityUpdate()));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }
}
