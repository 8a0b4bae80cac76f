/**
 * The test TCP proxy (test/helpers/tcp-proxy.ts) forwards each byte once, also on a
 * connection opened while it was paused or frozen: such a connection was piped when it
 * opened and again at resume(), and the target read every byte twice. So did any open
 * connection at a resume() with nothing paused (a test's clean-up): a client then read two
 * replies to one command.
 */
import net from 'node:net';
import { tcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';

let echo: net.Server;
let port = 0;
let proxy: TcpProxy;
beforeAll(async () => {
  echo = net.createServer((s) => s.pipe(s));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  port = (echo.address() as net.AddressInfo).port;
});
afterEach(async () => proxy?.close());
afterAll(async () => new Promise<void>((resolve) => echo.close(() => resolve())));

/** Sends `text` over a connection made before `resume` runs, and reads what comes back until it has as much. */
async function roundTrip(hold: (p: TcpProxy) => void): Promise<string> {
  proxy = await tcpProxy(port);
  hold(proxy);
  const c = net.connect(proxy.port, '127.0.0.1');
  await new Promise<void>((resolve) => c.once('connect', () => resolve()));
  await new Promise((resolve) => setTimeout(resolve, 50)); // the proxy has taken the connection
  proxy.resume();
  let got = '';
  c.on('data', (b: Buffer) => (got += b.toString()));
  c.write('ping');
  await new Promise((resolve) => setTimeout(resolve, 200)); // a doubled echo would be in by now
  c.destroy();
  return got;
}

it.each([
  ['paused', (p: TcpProxy) => p.pause()],
  ['frozen', (p: TcpProxy) => p.freeze()],
  ['black-holed', (p: TcpProxy) => p.blackhole()],
  ['never paused', () => undefined],
])('forwards each byte once on a connection opened while %s, once resumed', async (_name, hold) => {
  expect(await roundTrip(hold)).toBe('ping');
});
