/**
 * A listener's address as a client dials it, and a failed bind as an operator
 * reads it: the config key, the address, the system's reason.
 */
import net from 'node:net';
import { listenError, listenOn } from '../../../src/util/listen';

const servers: net.Server[] = [];
afterEach(() => Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r)))));

function server(): net.Server {
  const s = net.createServer();
  servers.push(s);
  return s;
}

it('binds a bracketed IPv6 address and reports it with the port it got', async () => {
  const address = await listenOn(server(), '[::1]:0', 'metrics.listen');
  expect(address).toMatch(/^\[::1\]:[1-9]\d*$/);
});

it('reports a wildcard bind as the loopback address', async () => {
  expect(await listenOn(server(), '0.0.0.0:0', 'metrics.listen')).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
});

it('reports an IPv6 wildcard bind as the loopback address, which a client can dial', async () => {
  const address = await listenOn(server(), '[::]:0', 'api.listen');
  expect(address).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
  const [host, port] = address.split(':');
  await new Promise<void>((resolve, reject) => {
    const socket = net.connect(Number(port), host, () => {
      socket.end();
      resolve();
    });
    socket.on('error', reject);
  });
});

it('rejects a taken port naming the key, the address and the reason', async () => {
  const taken = await listenOn(server(), '127.0.0.1:0', 'metrics.listen');
  await expect(listenOn(server(), taken, 'http.listen')).rejects.toThrow(
    new Error(`config http.listen: cannot listen on ${taken}: address already in use`),
  );
});

it("keeps the whole message of a failure that is not the listen call's own", () => {
  const err = Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND', syscall: 'getaddrinfo' });
  expect(listenError('metrics.listen', 'nowhere.invalid:9464', err).message)
    .toBe('config metrics.listen: cannot listen on nowhere.invalid:9464: getaddrinfo ENOTFOUND nowhere.invalid');
});
