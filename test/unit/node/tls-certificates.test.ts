/**
 * What a read of the tls.* files takes into service: a new certificate goes to
 * the identity listeners and the HTTPS side once; files rewritten with the same
 * bytes (a touch, a Secret resync) change nothing and log nothing; a file gone
 * for longer than the settle time is logged once at ERROR while the certificate
 * in service stays; where fs.watch gives no events, the periodic stat (every
 * 10 s) takes a renewed set into service.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TLS_SETTLE_MS, TlsCertificates } from '../../../src/node/tls-certificates';
import { makeCerts, type TestCerts } from '../../helpers/certs';
import { captureLogs } from '../../helpers/logs';

let dir: string;
let first: TestCerts;
let second: TestCerts;
let other: TestCerts;
let tls: TlsCertificates | undefined;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-tls-'));
  fs.mkdirSync(path.join(dir, 'a'));
  fs.mkdirSync(path.join(dir, 'b'));
  fs.mkdirSync(path.join(dir, 'live'));
  first = makeCerts(path.join(dir, 'a'), { cn: 'first', san: 'IP:127.0.0.1' });
  second = makeCerts(path.join(dir, 'b'), { cn: 'second', san: 'IP:127.0.0.1', ca: first.ca });
  fs.mkdirSync(path.join(dir, 'c'));
  other = makeCerts(path.join(dir, 'c'), { cn: 'other', san: 'IP:127.0.0.1' }); // a CA of its own
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  tls?.stop();
  tls = undefined;
  jest.useRealTimers();
});

function install(from: TestCerts): { cert: string; key: string; ca: string } {
  const live = { cert: path.join(dir, 'live', 'cert.pem'), key: path.join(dir, 'live', 'cert.key'), ca: path.join(dir, 'live', 'ca.pem') };
  fs.copyFileSync(from.cert, live.cert);
  fs.copyFileSync(from.key, live.key);
  fs.copyFileSync(from.ca, live.ca);
  return live;
}

type Line = { level: number; msg: string; file?: string; key?: string; serial?: string };

it('takes a new certificate into service once, and the same bytes written again not at all', () => {
  const paths = install(first);
  const { logger, lines } = captureLogs<Line>();
  tls = new TlsCertificates(paths, logger, 60_000);
  const bootSerial = tls.facts.serial;
  const applied: string[] = [];
  const identities: string[] = [];
  const cas: unknown[] = [];
  tls.onApplied((_pem, facts) => applied.push(facts.serial));
  tls.addIdentityCertificateListener((u) => identities.push(u ? u.certificate.toString() : 'none'));
  tls.addCaCertificateListener((u) => cas.push(u));

  install(first); // the same bytes, rewritten
  tls.reload();
  expect(tls.generation).toBe(1);
  expect(applied).toEqual([]);
  expect(lines).toEqual([]);
  expect(tls.facts.serial).toBe(bootSerial);

  install(second); // same CA, a new certificate and key
  tls.reload();
  expect(tls.facts.serial).not.toBe(bootSerial);
  expect(applied).toEqual([tls.facts.serial]);
  expect(identities).toEqual([fs.readFileSync(second.cert, 'utf8')]);
  expect(cas).toEqual([]); // the CA did not change: its listeners hear nothing
  expect(tls.current.cert.equals(fs.readFileSync(second.cert))).toBe(true);
  expect(lines).toEqual([expect.objectContaining({ level: 30, msg: expect.stringContaining('reloaded') })]);
});

it('keeps the certificate in service while a file is gone, and logs it once at ERROR after the settle time', async () => {
  const paths = install(first);
  const { logger, lines } = captureLogs<Line>();
  tls = new TlsCertificates(paths, logger, 60_000);
  const served = tls.current;
  jest.useFakeTimers();
  fs.rmSync(paths.key);
  tls.reload();
  await jest.advanceTimersByTimeAsync(TLS_SETTLE_MS - 100);
  expect(lines).toEqual([]); // its pair may be on its way
  const readsBefore = tls.generation;
  expect(readsBefore).toBeGreaterThan(1);
  expect(readsBefore).toBeLessThan(10); // read again at doubling delays, not in a tight loop
  await jest.advanceTimersByTimeAsync(60_000);
  expect(lines).toEqual([expect.objectContaining({ level: 50, file: paths.key })]);
  expect(tls.current).toBe(served);
});

it('does not start on a key of another certificate, naming the key', () => {
  const paths = install(first);
  fs.copyFileSync(second.key, paths.key);
  expect(() => new TlsCertificates(paths, captureLogs<Line>().logger, 60_000)).toThrow(/^config tls\.key: .*is not the key of the certificate/);
});

it('gives its facts: the expiry of the certificate in service', () => {
  const paths = install(first);
  tls = new TlsCertificates(paths, captureLogs<Line>().logger, 60_000);
  const x = new X509Certificate(fs.readFileSync(first.cert));
  expect(tls.facts).toEqual({ serial: x.serialNumber, fingerprint256: x.fingerprint256, notAfterMs: Date.parse(x.validTo) });
});

it('takes a new CA bundle alone into service for the CA listeners, and a key saved in another encoding for the identity ones', () => {
  const paths = install(first);
  tls = new TlsCertificates(paths, captureLogs<Line>().logger, 60_000);
  const identities: string[] = [];
  const cas: string[] = [];
  tls.addIdentityCertificateListener((u) => identities.push(u ? u.privateKey.toString() : 'none'));
  tls.addCaCertificateListener((u) => cas.push(u ? u.caCertificate.toString() : 'none'));
  const bundle = Buffer.concat([fs.readFileSync(first.ca), fs.readFileSync(other.ca)]);
  fs.writeFileSync(paths.ca, bundle);
  tls.reload();
  expect(cas).toEqual([bundle.toString()]);
  expect(identities).toEqual([]);
  const pkcs1 = createPrivateKey(fs.readFileSync(first.key)).export({ type: 'pkcs1', format: 'pem' }) as string;
  expect(pkcs1).not.toBe(fs.readFileSync(first.key, 'utf8'));
  fs.writeFileSync(paths.key, pkcs1);
  tls.reload();
  expect(identities).toEqual([pkcs1]);
  expect(cas).toHaveLength(1);
});

it('answers a listener on the next tick, with no CA when none is configured, and not once removed', async () => {
  const paths = install(first);
  tls = new TlsCertificates({ ...paths, ca: '' }, captureLogs<Line>().logger, 60_000);
  const heard: unknown[] = [];
  const gone = (u: unknown) => heard.push(['gone', u]);
  tls.addCaCertificateListener((u) => heard.push(u));
  tls.addCaCertificateListener(gone);
  tls.removeCaCertificateListener(gone);
  const goneIdentity = (u: unknown) => heard.push(['gone identity', u]);
  tls.addIdentityCertificateListener(goneIdentity);
  tls.removeIdentityCertificateListener(goneIdentity);
  expect(heard).toEqual([]);
  await new Promise((r) => process.nextTick(r));
  expect(heard).toEqual([null]);
  install(second);
  tls.reload();
  expect(heard).toEqual([null]); // removed listeners hear no later change either
});

describe('a set of files that does not check out', () => {
  /** Serves `first`, then puts `second`'s key beside `first`'s certificate and reloads. */
  function mismatchedKeyInstalled() {
    const paths = install(first);
    const { logger, lines } = captureLogs<Line>();
    const certs = new TlsCertificates(paths, logger, 60_000);
    tls = certs;
    jest.useFakeTimers();
    fs.copyFileSync(second.key, paths.key);
    certs.reload();
    return { paths, lines, certs };
  }

  it('is reported by the end of the settle time, naming the key, its file and the serial still served', async () => {
    const { paths, lines, certs } = mismatchedKeyInstalled();
    await jest.advanceTimersByTimeAsync(TLS_SETTLE_MS + 10);
    expect(lines).toEqual([expect.objectContaining({ level: 50, key: 'tls.key', file: paths.key, serial: certs.facts.serial })]);
  });

  it('read again on each change is reported once, and not at all once stopped', async () => {
    const { lines, certs } = mismatchedKeyInstalled();
    await jest.advanceTimersByTimeAsync(60);
    certs.reload();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(lines).toHaveLength(1);
    certs.reload();
    await jest.advanceTimersByTimeAsync(100);
    certs.stop();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(lines).toHaveLength(1);
  });
});

it('where the folder cannot be watched, takes a renewed certificate into service by the periodic stat within 10 s', async () => {
  // docs/security.md: "a stat every 10 s as a fallback" where fs.watch gives no events.
  const paths = install(first);
  const { logger, lines } = captureLogs<Line>();
  const watch = jest.spyOn(fs, 'watch').mockImplementation(() => {
    throw Object.assign(new Error('ENOSYS: watch not supported'), { code: 'ENOSYS' });
  });
  try {
    jest.useFakeTimers();
    tls = new TlsCertificates(paths, logger); // the node's default check interval
    tls.start();
    const bootSerial = tls.facts.serial;
    install(second);
    await jest.advanceTimersByTimeAsync(9_900);
    expect(tls.facts.serial).toBe(bootSerial); // not yet: no event, the stat not due
    await jest.advanceTimersByTimeAsync(200);
    expect(tls.facts.serial).not.toBe(bootSerial);
    expect(tls.current.cert.equals(fs.readFileSync(second.cert))).toBe(true);
    expect(lines.map((l) => l.msg)).toEqual([expect.stringContaining('cannot watch'), expect.stringContaining('reloaded')]);
  } finally {
    watch.mockRestore();
  }
});
