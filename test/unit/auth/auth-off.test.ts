/**
 * Turning auth off (docs/security.md "Turning auth off"): only an explicit
 * `auth.enabled: false` does it, and the node then says so in a WARN at
 * startup, so a node serving every caller for every tenant never does so
 * unnoticed. With auth on and no tokens file, every call is refused instead,
 * and no such banner is logged.
 */
import { Metadata, type CallContext } from 'nice-grpc';
import pino from 'pino';
import { Auth } from '../../../src/auth/auth';
import { loadConfig } from '../../../src/config';

function capture() {
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as { level: number; msg: string }) });
  return { log, lines };
}
const noToken = { metadata: Metadata() } as unknown as CallContext;
const banner = (lines: { level: number; msg: string }[]) => lines.filter((l) => l.msg.includes('AUTH IS OFF'));

it('with auth.enabled: false, warns at startup that auth is off, and every call acts for every tenant', () => {
  const { log, lines } = capture();
  const auth = new Auth(loadConfig({ env: {}, overrides: { 'auth.enabled': false } }), log);
  auth.start();
  try {
    expect(banner(lines).map((l) => l.level)).toEqual([40]);
    expect(auth.recheck('client', noToken)).toMatchObject({ allTenants: true });
  } finally {
    auth.stop();
  }
});

it('with auth on by default and no tokens file, logs no such banner and refuses a call', () => {
  const { log, lines } = capture();
  const auth = new Auth(loadConfig({ env: {} }), log);
  auth.start();
  try {
    expect(banner(lines)).toEqual([]);
    expect(() => auth.recheck('client', noToken)).toThrow('ZD_UNAUTHENTICATED');
  } finally {
    auth.stop();
  }
});
