/**
 * A test CA and one certificate it signs, made with openssl in `dir`: for TLS
 * between clients, nodes, peers and Redis in the tests. `san` is the
 * certificate's subjectAltName (`IP:127.0.0.1,DNS:localhost`); `clientAuth`
 * adds that usage, for a certificate presented when dialling too (mutual TLS,
 * a Redis Cluster's bus). `ca` signs with an existing CA (another call's
 * `ca` and its key, `<dir of ca>/ca.key`) instead of a new one.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface TestCerts {
  /** The CA's certificate (PEM file). */
  ca: string;
  cert: string;
  key: string;
}

export function makeCerts(dir: string, opts: { cn: string; san: string; clientAuth?: boolean; ca?: string }): TestCerts {
  const f = (n: string) => path.join(dir, n);
  const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  if (opts.ca) {
    fs.copyFileSync(opts.ca, f('ca.pem'));
    fs.copyFileSync(path.join(path.dirname(opts.ca), 'ca.key'), f('ca.key'));
  } else {
    run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=zdmatch-test-ca', '-keyout', f('ca.key'), '-out', f('ca.pem')]);
  }
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${opts.cn}`, '-keyout', f('cert.key'), '-out', f('cert.csr')]);
  const usage = opts.clientAuth ? '\nextendedKeyUsage=serverAuth,clientAuth' : '';
  fs.writeFileSync(f('ext.cnf'), `subjectAltName=${opts.san}${usage}\n`);
  run(['x509', '-req', '-in', f('cert.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', f('ext.cnf'), '-out', f('cert.pem')]);
  return { ca: f('ca.pem'), cert: f('cert.pem'), key: f('cert.key') };
}
