/**
 * `zdmatch serve` with tls.* files that are there but unusable: each is a config error
 * (exit 2, one line naming the key), not OpenSSL's words with no key named (exit 1),
 * nor a node that boots with a tls.ca that trusts no peer. Needs `npm run build`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeCerts, type TestCerts } from '../helpers/certs';
import { runCli } from '../helpers/cli';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ZD_')));
let dir: string;
let certs: TestCerts;
let other: TestCerts;
let notPem: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-serve-tls-'));
  fs.mkdirSync(path.join(dir, 'a'));
  fs.mkdirSync(path.join(dir, 'b'));
  certs = makeCerts(path.join(dir, 'a'), { cn: 'zdmatch', san: 'IP:127.0.0.1', clientAuth: true });
  other = makeCerts(path.join(dir, 'b'), { cn: 'zdmatch', san: 'IP:127.0.0.1', clientAuth: true });
  notPem = path.join(dir, 'not.pem');
  fs.writeFileSync(notPem, 'not a PEM file\n');
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const serve = (tls: { cert: string; key: string; ca?: string }) => runCli([
  'serve', `--redis.url=${redis.url}`, `--redis.keyPrefix=${uniquePrefix('serve-tls')}`, '--api.listen=127.0.0.1:0',
  '--http.listen=127.0.0.1:0', '--metrics.listen=127.0.0.1:0', '--internal.listen=127.0.0.1:0', '--auth.enabled=false',
  '--log.level=silent', '--tls.enabled=true', `--tls.cert=${tls.cert}`, `--tls.key=${tls.key}`, ...(tls.ca ? [`--tls.ca=${tls.ca}`] : []),
], { env, timeoutMs: 10_000 });

it.each([
  ['the key given as tls.cert', () => ({ cert: certs.key, key: certs.key }), 'tls.cert'],
  ['a tls.cert that is no PEM', () => ({ cert: notPem, key: certs.key }), 'tls.cert'],
  ['the certificate given as tls.key', () => ({ cert: certs.cert, key: certs.cert }), 'tls.key'],
  ['the key of another certificate', () => ({ cert: certs.cert, key: other.key }), 'tls.key'],
  ['a tls.ca that is no PEM', () => ({ ...certs, ca: notPem }), 'tls.ca'],
  ['a key given as tls.ca', () => ({ ...certs, ca: certs.key }), 'tls.ca'],
])('%s is refused at startup naming the key, exit 2', (_label, files, key) => {
  const r = serve(files());
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: expect.stringMatching(new RegExp(`^config ${key.replace('.', '\\.')}: [^\\n]+\\n$`)) });
});
