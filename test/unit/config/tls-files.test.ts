/**
 * The tls.* files are checked at boot as the listeners will read them, the
 * error naming the key and the file: unchecked, a tls.key or tls.ca that
 * cannot be read fails the boot with a bare ENOENT naming neither, and a CA
 * bundle whose later certificate is corrupt (a paste cut short) reaches the
 * peer mesh, which trusts less than the file lists.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../../src/config';
import { makeCerts, type TestCerts } from '../../helpers/certs';

let dir: string;
let certs: TestCerts;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-tls-files-'));
  certs = makeCerts(dir, { cn: 'zdmatch', san: 'IP:127.0.0.1', clientAuth: true });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function failure(files: { cert: string; key: string; ca?: string }): ConfigError {
  try {
    loadConfig({ env: {}, overrides: { 'tls.enabled': true, 'tls.cert': files.cert, 'tls.key': files.key, 'tls.ca': files.ca ?? '' } });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

it('takes a certificate, its key and a CA bundle that parse', () => {
  const overrides = { 'tls.enabled': true, 'tls.cert': certs.cert, 'tls.key': certs.key, 'tls.ca': certs.ca };
  expect(loadConfig({ env: {}, overrides }).tls).toMatchObject({ enabled: true, ...certs });
});

it.each(['key', 'ca'] as const)('refuses a tls.%s it cannot read, naming the key and the file', (key) => {
  const missing = path.join(dir, `missing-${key}.pem`);
  const err = failure({ ...certs, [key]: missing });
  expect(err.key).toBe(`tls.${key}`);
  expect(err.message).toBe(`config tls.${key}: cannot read ${missing}: ENOENT`);
});

it('refuses a CA bundle whose second certificate does not parse, naming which', () => {
  const pem = fs.readFileSync(certs.ca, 'latin1');
  const body = pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s/g, '');
  // The same certificate again with a stretch of its body cut out: still a PEM block, no longer a certificate.
  const cut = `-----BEGIN CERTIFICATE-----\n${body.slice(0, 200)}${body.slice(400)}\n-----END CERTIFICATE-----\n`;
  const bundle = path.join(dir, 'bundle.pem');
  fs.writeFileSync(bundle, pem + cut);
  const err = failure({ ...certs, ca: bundle });
  expect(err.key).toBe('tls.ca');
  expect(err.message).toMatch(new RegExp(`^config tls\\.ca: certificate 2 of ${bundle.replace(/[.]/g, '\\.')} does not parse`));
});

it('refuses a key given as the certificate, a certificate given as the key, and a key of another certificate, naming which', () => {
  const other = makeCerts(fs.mkdtempSync(path.join(dir, 'other-')), { cn: 'other', san: 'DNS:other' });
  const cases: [{ cert: string; key: string }, string, string][] = [
    [{ cert: certs.key, key: certs.key }, 'tls.cert', `${certs.key} is not a PEM certificate (chain): `],
    [{ cert: certs.cert, key: certs.cert }, 'tls.key', `${certs.cert} is not an unencrypted PEM private key: `],
    [{ cert: certs.cert, key: other.key }, 'tls.key', `${other.key} is not the key of the certificate in tls.cert: `],
  ];
  for (const [files, key, reason] of cases) {
    const err = failure(files);
    expect(err.key).toBe(key);
    expect(err.message.startsWith(`config ${key}: ${reason}`)).toBe(true);
    // OpenSSL's code ("error:0480006C:") is left out: the reason reads as words.
    expect(err.message).not.toMatch(/: error:[0-9A-F]+:/);
  }
});

it('refuses a tls.ca that holds no certificate: it would trust no peer', () => {
  const err = failure({ ...certs, ca: certs.key });
  expect(err.key).toBe('tls.ca');
  expect(err.message).toBe(`config tls.ca: ${certs.key} holds no PEM certificate`);
});
